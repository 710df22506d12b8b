/**
 * The Telegram channel's settings, all from the plugin's environment (the manifest's defaults,
 * overridden by `env:` for the plugin in plugins.yaml). Read at every `channel.start`.
 *
 *   TELEGRAM_BOT_TOKEN         the bot's token from @BotFather, unless one was registered through
 *                              the credential methods (that one wins; see credentials.ts)
 *   TELEGRAM_MODE              polling | webhook                                 default polling
 *   TELEGRAM_WEBHOOK_URL       webhook mode: the public https URL Telegram posts to (a reverse
 *                              proxy in front of the listener below); its path is served
 *   TELEGRAM_WEBHOOK_HOST      webhook mode: the local listener's address       default 127.0.0.1
 *   TELEGRAM_WEBHOOK_PORT      webhook mode: its port (0: any free port)        default 8443
 *   TELEGRAM_WEBHOOK_SECRET    the X-Telegram-Bot-Api-Secret-Token to require   default random per start
 *   TELEGRAM_ALLOWED_USERS     who may talk to the agent: user ids or @usernames, comma-separated,
 *                              or `*` for anyone                                 default nobody
 *   TELEGRAM_GROUPS            in groups, answer: mention (when @mentioned, replied to or sent a
 *                              /command@bot) | all | off                         default mention
 *   TELEGRAM_OUTBOUND_ALLOWED  chats the bot may send to: known (chats that wrote to it) | * | ids
 *                                                                                default known
 *   TELEGRAM_RATE_PER_MINUTE   inbound messages per person per minute (burst: the same number,
 *                              at most 10)                                       default 20
 *   TELEGRAM_SEND_PER_MINUTE   outbound messages per chat per minute (Telegram allows about one
 *                              a second in a chat, 20 a minute in a group)      default 20
 *   TELEGRAM_MEDIA_MAX_BYTES   largest inbound file downloaded (the Bot API serves up to 20 MB)
 *                                                                                default 20971520
 *   TELEGRAM_MEDIA_DIRS        local directories files may be sent from (comma-separated)
 *                                                                                default $NEXO_STATE_DIR/media/out
 *   TELEGRAM_SEND_WAIT_MS      how long channel.send_outbound waits for Telegram before it answers
 *                              "queued"                                          default 15000
 *   TELEGRAM_POLL_TIMEOUT_SECS long-polling timeout of getUpdates             default 30
 *   TELEGRAM_API_ROOT          the Bot API server (a local Bot API server, or a test's fake)
 *                                                                                default https://api.telegram.org
 */
import { join } from "node:path";
import { Allowlist, ChannelConfigError, envInteger, envOneOf } from "@nexo/channels-common";

type Env = Readonly<Record<string, string | undefined>>;

export type GroupMode = "mention" | "all" | "off";

export interface TelegramConfig {
  stateDir: string;
  envToken: string | undefined;
  mode: "polling" | "webhook";
  webhook: { url: URL; host: string; port: number; secret: string | undefined } | undefined;
  allowedUsers: Allowlist;
  groups: GroupMode;
  outboundAllowed: string | undefined;
  ratePerMinute: number;
  sendPerMinute: number;
  mediaMaxBytes: number;
  mediaDirs: string[];
  sendWaitMs: number;
  pollTimeoutSecs: number;
  apiRoot: string;
}

export function readTelegramConfig(env: Env): TelegramConfig {
  const stateDir = env.NEXO_STATE_DIR?.trim() || process.cwd();
  const mode = envOneOf(env, "TELEGRAM_MODE", ["polling", "webhook"] as const, "polling");
  let webhook: TelegramConfig["webhook"];
  if (mode === "webhook") {
    const raw = env.TELEGRAM_WEBHOOK_URL?.trim() ?? "";
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ChannelConfigError(
        "TELEGRAM_WEBHOOK_URL",
        `must be the public https URL Telegram posts to, got "${raw}"`,
      );
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new ChannelConfigError("TELEGRAM_WEBHOOK_URL", `must be an https URL, got "${raw}"`);
    }
    const secret = env.TELEGRAM_WEBHOOK_SECRET?.trim() || undefined;
    if (secret !== undefined && !/^[A-Za-z0-9_-]{16,256}$/.test(secret)) {
      throw new ChannelConfigError(
        "TELEGRAM_WEBHOOK_SECRET",
        "must be 16 to 256 characters of A-Z, a-z, 0-9, _ and -",
      );
    }
    webhook = {
      url,
      host: env.TELEGRAM_WEBHOOK_HOST?.trim() || "127.0.0.1",
      port: envInteger(env, "TELEGRAM_WEBHOOK_PORT", 8443, 0, 65535),
      secret,
    };
  }
  const apiRoot = (env.TELEGRAM_API_ROOT?.trim() || "https://api.telegram.org").replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(apiRoot))
    throw new ChannelConfigError("TELEGRAM_API_ROOT", `must be an http(s) URL, got "${apiRoot}"`);
  const mediaDirs = (env.TELEGRAM_MEDIA_DIRS ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter((dir) => dir !== "");
  return {
    stateDir,
    envToken: env.TELEGRAM_BOT_TOKEN?.trim() || undefined,
    mode,
    webhook,
    allowedUsers: Allowlist.parse(env.TELEGRAM_ALLOWED_USERS),
    groups: envOneOf(env, "TELEGRAM_GROUPS", ["mention", "all", "off"] as const, "mention"),
    outboundAllowed: env.TELEGRAM_OUTBOUND_ALLOWED,
    ratePerMinute: envInteger(env, "TELEGRAM_RATE_PER_MINUTE", 20, 1, 10_000),
    sendPerMinute: envInteger(env, "TELEGRAM_SEND_PER_MINUTE", 20, 1, 10_000),
    mediaMaxBytes: envInteger(env, "TELEGRAM_MEDIA_MAX_BYTES", 20 * 1024 * 1024, 0, 2 * 1024 * 1024 * 1024),
    mediaDirs: mediaDirs.length > 0 ? mediaDirs : [join(stateDir, "media", "out")],
    sendWaitMs: envInteger(env, "TELEGRAM_SEND_WAIT_MS", 15_000, 0, 300_000),
    pollTimeoutSecs: envInteger(env, "TELEGRAM_POLL_TIMEOUT_SECS", 30, 0, 50),
    apiRoot,
  };
}
