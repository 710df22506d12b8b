/**
 * The Slack channel's settings, all from the plugin's environment (the manifest's defaults,
 * overridden by `env:` for the plugin in plugins.yaml). Read at every `channel.start`.
 *
 *   SLACK_BOT_TOKEN          the app's bot token (xoxb-…), unless one was registered through the
 *                            credential methods (that one wins; see credentials.ts)
 *   SLACK_APP_TOKEN          Socket Mode: the app-level token (xapp-…) with connections:write
 *   SLACK_MODE               socket | events                                   default socket
 *   SLACK_SIGNING_SECRET     events mode: the app's signing secret (requests are verified with it)
 *   SLACK_EVENTS_HOST        events mode: the local listener's address         default 127.0.0.1
 *   SLACK_EVENTS_PORT        events mode: its port (0: any free port)          default 3000
 *   SLACK_EVENTS_PATH        events mode: the path Slack posts events and commands to
 *                                                                              default /slack/events
 *   SLACK_ALLOWED_USERS      who may talk to the agent: Slack user ids (U…), comma-separated, or
 *                            `*` for anyone in the workspace                   default nobody
 *   SLACK_CHANNELS           in channels, answer: mention (when @mentioned) | all | off
 *                                                                              default mention
 *   SLACK_OUTBOUND_ALLOWED   conversations the app may post to: known (that wrote to it) | * | ids
 *                                                                              default known
 *   SLACK_RATE_PER_MINUTE    inbound messages per person per minute           default 20
 *   SLACK_SEND_PER_MINUTE    outbound messages per conversation per minute (Slack allows about
 *                            one a second per channel)                         default 50
 *   SLACK_MEDIA_MAX_BYTES    largest inbound file downloaded                   default 20971520
 *   SLACK_MEDIA_DIRS         local directories files may be uploaded from (comma-separated)
 *                                                                              default $NEXO_STATE_DIR/media/out
 *   SLACK_SEND_WAIT_MS       how long channel.send_outbound waits for Slack before it answers
 *                            "queued"                                          default 15000
 *   SLACK_API_URL            the Web API's base URL (a test's fake)           default https://slack.com/api/
 */
import { join } from "node:path";
import { Allowlist, ChannelConfigError, envInteger, envOneOf } from "@nexo/channels-common";

type Env = Readonly<Record<string, string | undefined>>;

export type ChannelMode = "mention" | "all" | "off";

export interface SlackConfig {
  stateDir: string;
  envBotToken: string | undefined;
  envAppToken: string | undefined;
  mode: "socket" | "events";
  events: { host: string; port: number; path: string; signingSecret: string } | undefined;
  allowedUsers: Allowlist;
  channels: ChannelMode;
  outboundAllowed: string | undefined;
  ratePerMinute: number;
  sendPerMinute: number;
  mediaMaxBytes: number;
  mediaDirs: string[];
  sendWaitMs: number;
  apiUrl: string;
}

export function readSlackConfig(env: Env): SlackConfig {
  const stateDir = env.NEXO_STATE_DIR?.trim() || process.cwd();
  const mode = envOneOf(env, "SLACK_MODE", ["socket", "events"] as const, "socket");
  let events: SlackConfig["events"];
  if (mode === "events") {
    const signingSecret = env.SLACK_SIGNING_SECRET?.trim() ?? "";
    if (signingSecret === "") {
      throw new ChannelConfigError(
        "SLACK_SIGNING_SECRET",
        "events mode needs the app's signing secret (Basic Information → App Credentials)",
      );
    }
    const path = env.SLACK_EVENTS_PATH?.trim() || "/slack/events";
    if (!path.startsWith("/"))
      throw new ChannelConfigError("SLACK_EVENTS_PATH", `must start with /, got "${path}"`);
    events = {
      host: env.SLACK_EVENTS_HOST?.trim() || "127.0.0.1",
      port: envInteger(env, "SLACK_EVENTS_PORT", 3000, 0, 65535),
      path,
      signingSecret,
    };
  }
  let apiUrl = env.SLACK_API_URL?.trim() || "https://slack.com/api/";
  if (!/^https?:\/\/[^/]/.test(apiUrl))
    throw new ChannelConfigError("SLACK_API_URL", `must be an http(s) URL, got "${apiUrl}"`);
  if (!apiUrl.endsWith("/")) apiUrl += "/";
  const mediaDirs = (env.SLACK_MEDIA_DIRS ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter((dir) => dir !== "");
  return {
    stateDir,
    envBotToken: env.SLACK_BOT_TOKEN?.trim() || undefined,
    envAppToken: env.SLACK_APP_TOKEN?.trim() || undefined,
    mode,
    events,
    allowedUsers: Allowlist.parse(env.SLACK_ALLOWED_USERS),
    channels: envOneOf(env, "SLACK_CHANNELS", ["mention", "all", "off"] as const, "mention"),
    outboundAllowed: env.SLACK_OUTBOUND_ALLOWED,
    ratePerMinute: envInteger(env, "SLACK_RATE_PER_MINUTE", 20, 1, 10_000),
    sendPerMinute: envInteger(env, "SLACK_SEND_PER_MINUTE", 50, 1, 10_000),
    mediaMaxBytes: envInteger(env, "SLACK_MEDIA_MAX_BYTES", 20 * 1024 * 1024, 0, 1024 * 1024 * 1024),
    mediaDirs: mediaDirs.length > 0 ? mediaDirs : [join(stateDir, "media", "out")],
    sendWaitMs: envInteger(env, "SLACK_SEND_WAIT_MS", 15_000, 0, 300_000),
    apiUrl,
  };
}
