/**
 * The Discord channel's settings, all from the plugin's environment (the manifest's defaults,
 * overridden by `env:` for the plugin in plugins.yaml). Read at every `channel.start`.
 *
 *   DISCORD_BOT_TOKEN         the bot's token, unless one was registered through the credential
 *                             methods (that one wins; see credentials.ts)
 *   DISCORD_ALLOWED_USERS     who may talk to the agent: Discord user ids, comma-separated, or `*`
 *                             for anyone who can reach the bot                  default nobody
 *   DISCORD_ALLOWED_GUILDS    servers (guild ids) whose channels the bot answers in, or `*`
 *                             (direct messages are governed by DISCORD_ALLOWED_USERS alone)
 *                                                                               default *
 *   DISCORD_CHANNELS          in servers, answer: mention (when @mentioned, and in a thread the bot
 *                             is part of) | all | off                           default mention
 *   DISCORD_THREADS           on: a mention in a text channel starts a thread from that message and
 *                             the conversation goes on there | off: answer in the channel itself
 *                                                                               default on
 *   DISCORD_MESSAGE_CONTENT   on: ask for the Message Content intent (privileged: enable it in the
 *                             Developer Portal), needed to read messages in threads and with
 *                             DISCORD_CHANNELS=all | off                       default on
 *   DISCORD_REGISTER_COMMANDS on: register the /new and /help slash commands at start | off
 *                                                                               default on
 *   DISCORD_OUTBOUND_ALLOWED  conversations the bot may post to: known (that wrote to it) | * | ids
 *                                                                               default known
 *   DISCORD_RATE_PER_MINUTE   inbound messages per person per minute           default 20
 *   DISCORD_SEND_PER_MINUTE   outbound messages per conversation per minute (Discord allows about
 *                             five every five seconds per channel)              default 50
 *   DISCORD_MEDIA_MAX_BYTES   largest inbound attachment downloaded            default 26214400
 *   DISCORD_MEDIA_DIRS        local directories files may be uploaded from (comma-separated)
 *                                                                               default $NEXO_STATE_DIR/media/out
 *   DISCORD_SEND_WAIT_MS      how long channel.send_outbound waits for Discord before it answers
 *                             "queued"                                          default 15000
 *   DISCORD_API_URL           the REST API's base URL (a test's fake)          default https://discord.com/api
 *   DISCORD_CDN_URL           the origin attachments are downloaded from       default https://cdn.discordapp.com
 */
import { join } from "node:path";
import { Allowlist, ChannelConfigError, envInteger, envOneOf } from "@nexo/channels-common";

type Env = Readonly<Record<string, string | undefined>>;

export type ChannelMode = "mention" | "all" | "off";

export interface DiscordConfig {
  stateDir: string;
  envBotToken: string | undefined;
  allowedUsers: Allowlist;
  allowedGuilds: Allowlist;
  channels: ChannelMode;
  threads: boolean;
  messageContent: boolean;
  registerCommands: boolean;
  outboundAllowed: string | undefined;
  ratePerMinute: number;
  sendPerMinute: number;
  mediaMaxBytes: number;
  mediaDirs: string[];
  sendWaitMs: number;
  apiUrl: string;
  cdnUrl: string;
}

function httpUrl(env: Env, variable: string, fallback: string): string {
  const value = (env[variable]?.trim() || fallback).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(value))
    throw new ChannelConfigError(variable, `must be an http(s) URL, got "${value}"`);
  return value;
}

const onOff = (env: Env, variable: string, fallback: "on" | "off"): boolean =>
  envOneOf(env, variable, ["on", "off"] as const, fallback) === "on";

export function readDiscordConfig(env: Env): DiscordConfig {
  const stateDir = env.NEXO_STATE_DIR?.trim() || process.cwd();
  const mediaDirs = (env.DISCORD_MEDIA_DIRS ?? "")
    .split(",")
    .map((dir) => dir.trim())
    .filter((dir) => dir !== "");
  return {
    stateDir,
    envBotToken: env.DISCORD_BOT_TOKEN?.trim() || undefined,
    allowedUsers: Allowlist.parse(env.DISCORD_ALLOWED_USERS),
    allowedGuilds: Allowlist.parse(env.DISCORD_ALLOWED_GUILDS ?? "*"),
    channels: envOneOf(env, "DISCORD_CHANNELS", ["mention", "all", "off"] as const, "mention"),
    threads: onOff(env, "DISCORD_THREADS", "on"),
    messageContent: onOff(env, "DISCORD_MESSAGE_CONTENT", "on"),
    registerCommands: onOff(env, "DISCORD_REGISTER_COMMANDS", "on"),
    outboundAllowed: env.DISCORD_OUTBOUND_ALLOWED,
    ratePerMinute: envInteger(env, "DISCORD_RATE_PER_MINUTE", 20, 1, 10_000),
    sendPerMinute: envInteger(env, "DISCORD_SEND_PER_MINUTE", 50, 1, 10_000),
    mediaMaxBytes: envInteger(env, "DISCORD_MEDIA_MAX_BYTES", 25 * 1024 * 1024, 0, 1024 * 1024 * 1024),
    mediaDirs: mediaDirs.length > 0 ? mediaDirs : [join(stateDir, "media", "out")],
    sendWaitMs: envInteger(env, "DISCORD_SEND_WAIT_MS", 15_000, 0, 300_000),
    apiUrl: httpUrl(env, "DISCORD_API_URL", "https://discord.com/api"),
    cdnUrl: httpUrl(env, "DISCORD_CDN_URL", "https://cdn.discordapp.com"),
  };
}
