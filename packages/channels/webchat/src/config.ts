/**
 * The web chat channel's settings, all from the plugin's environment (the manifest's defaults,
 * overridden by `env:` for the plugin in plugins.yaml). Read at every `channel.start`.
 *
 *   WEBCHAT_HOST                 the listener's address                          default 127.0.0.1
 *   WEBCHAT_PORT                 its port (0: any free port)                     default 8790
 *   WEBCHAT_ALLOW_PUBLIC_BIND    must be 1 for a WEBCHAT_HOST that is not a loopback address
 *                                (put TLS and a reverse proxy in front; see the docs)
 *   WEBCHAT_ALLOWED_ORIGINS      pages that may open the chat: origins (https://shop.example),
 *                                comma-separated, or `*`         default: the listener's own origin
 *   WEBCHAT_RATE_PER_MINUTE      messages per visitor per minute (burst: the same number, at most
 *                                10)                                              default 20
 *   WEBCHAT_NEW_VISITORS_PER_MINUTE  new visitor ids issued per client address per minute
 *                                                                                 default 10
 *   WEBCHAT_MAX_TEXT_CHARS       longest message a visitor may send              default 4000
 *   WEBCHAT_MEDIA_MAX_BYTES      largest file a visitor may upload (0: no uploads) default 5242880
 *   WEBCHAT_MEDIA_DIRS           local directories a reply's files may come from (comma-separated)
 *                                                                     default $NEXO_STATE_DIR/media/out
 *   WEBCHAT_HISTORY_MESSAGES     messages kept per visitor and shown after a reload   default 200
 *   WEBCHAT_TITLE                the widget's heading                             default "Chat"
 */
import { isIP } from "node:net";
import { join } from "node:path";
import { ChannelConfigError, envInteger } from "@nexo/channels-common";

type Env = Readonly<Record<string, string | undefined>>;

export interface WebchatConfig {
  stateDir: string;
  host: string;
  port: number;
  /** Origins allowed to open the chat; `undefined` = only the listener's own origin. */
  allowedOrigins: "*" | string[] | undefined;
  ratePerMinute: number;
  newVisitorsPerMinute: number;
  maxTextChars: number;
  mediaMaxBytes: number;
  mediaDirs: string[];
  historyMessages: number;
  title: string;
}

/** 127.0.0.0/8, ::1 and `localhost`: what only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || bare === "0:0:0:0:0:0:0:1";
  return false;
}

/** `https://Shop.Example:443/` → `https://shop.example`: the form browsers send in Origin. */
function normaliseOrigin(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ChannelConfigError(
      "WEBCHAT_ALLOWED_ORIGINS",
      `"${raw}" is not an origin (like https://shop.example)`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ChannelConfigError("WEBCHAT_ALLOWED_ORIGINS", `"${raw}" is not an http(s) origin`);
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    throw new ChannelConfigError(
      "WEBCHAT_ALLOWED_ORIGINS",
      `"${raw}" has a path; an origin is scheme://host[:port] only`,
    );
  }
  return url.origin;
}

export function readWebchatConfig(env: Env): WebchatConfig {
  const stateDir = env.NEXO_STATE_DIR?.trim() || process.cwd();
  const host = env.WEBCHAT_HOST?.trim() || "127.0.0.1";
  if (!isLoopback(host) && env.WEBCHAT_ALLOW_PUBLIC_BIND?.trim() !== "1") {
    throw new ChannelConfigError(
      "WEBCHAT_HOST",
      `"${host}" is not a loopback address: set WEBCHAT_ALLOW_PUBLIC_BIND=1 to listen on it (behind TLS)`,
    );
  }
  const origins = (env.WEBCHAT_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
  let allowedOrigins: WebchatConfig["allowedOrigins"];
  if (origins.includes("*")) {
    if (origins.length > 1)
      throw new ChannelConfigError("WEBCHAT_ALLOWED_ORIGINS", "`*` cannot be combined with other origins");
    allowedOrigins = "*";
  } else if (origins.length > 0) {
    allowedOrigins = origins.map(normaliseOrigin);
  }
  const mediaDirs = (env.WEBCHAT_MEDIA_DIRS ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter((dir) => dir !== "");
  return {
    stateDir,
    host,
    port: envInteger(env, "WEBCHAT_PORT", 8790, 0, 65535),
    allowedOrigins,
    ratePerMinute: envInteger(env, "WEBCHAT_RATE_PER_MINUTE", 20, 1, 10_000),
    newVisitorsPerMinute: envInteger(env, "WEBCHAT_NEW_VISITORS_PER_MINUTE", 10, 1, 10_000),
    maxTextChars: envInteger(env, "WEBCHAT_MAX_TEXT_CHARS", 4000, 1, 100_000),
    mediaMaxBytes: envInteger(env, "WEBCHAT_MEDIA_MAX_BYTES", 5 * 1024 * 1024, 0, 50 * 1024 * 1024),
    mediaDirs: mediaDirs.length > 0 ? mediaDirs : [join(stateDir, "media", "out")],
    historyMessages: envInteger(env, "WEBCHAT_HISTORY_MESSAGES", 200, 1, 10_000),
    title: env.WEBCHAT_TITLE?.trim() || "Chat",
  };
}
