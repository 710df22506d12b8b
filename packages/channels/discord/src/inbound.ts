/**
 * Which Discord messages reach the agent, and as what: the pure decision, kept apart from
 * discord.js so it can be read (and tested) on its own.
 *
 * - Direct messages always, when the sender is in DISCORD_ALLOWED_USERS.
 * - In servers (guilds in DISCORD_ALLOWED_GUILDS), by DISCORD_CHANNELS: `mention` answers posts
 *   that @mention the bot, and every post in a thread the bot already talks in; `all` every post;
 *   `off` none.
 * - Never: the bot's own posts, other bots' and webhooks', system messages (joins, pins, thread
 *   starters), people outside the allowlist.
 *
 * The conversation (the router's contact, the reply's `to`) is the Discord channel the post is in:
 * a DM channel, a thread (each thread its own conversation), or a text channel — which the channel
 * turns into a new thread when DISCORD_THREADS is on (`startThread`).
 */
import type { DiscordConfig } from "./config.js";

/** Discord message types a person writes: DEFAULT and REPLY (the rest are system messages). */
const PERSON_MESSAGE_TYPES = new Set([0, 19]);

/** The part of a Discord message read here, independent of discord.js's classes. */
export interface InboundMessage {
  id: string;
  type: number;
  channelId: string;
  guildId: string | undefined;
  authorId: string;
  authorIsBot: boolean;
  webhookId: string | undefined;
  content: string;
  mentionsMe: boolean;
  /** The channel is a thread. */
  inThread: boolean;
  /** A thread this bot already holds a conversation in. */
  knownThread: boolean;
  attachments: InboundAttachment[];
}

export interface InboundAttachment {
  url: string;
  name: string;
  contentType: string | undefined;
  size: number;
}

export interface AcceptedInbound {
  senderId: string;
  text: string;
  /** Unique per Discord message: how nexo recognises one delivered twice. */
  messageId: string;
  direct: boolean;
  /** A mention in a plain text channel that should become a thread (DISCORD_THREADS=on). */
  startThread: boolean;
  attachments: InboundAttachment[];
}

export type InboundDecision = { accept: AcceptedInbound } | { ignore: string };

export function decideInbound(
  message: InboundMessage,
  me: { id: string },
  config: Pick<DiscordConfig, "allowedUsers" | "allowedGuilds" | "channels" | "threads">,
): InboundDecision {
  if (message.authorId === me.id) return { ignore: "the bot's own post" };
  if (message.authorIsBot || message.webhookId !== undefined) return { ignore: "a bot's or webhook's post" };
  if (!PERSON_MESSAGE_TYPES.has(message.type)) return { ignore: `a system message (type ${message.type})` };
  const direct = message.guildId === undefined;
  if (!direct) {
    if (!config.allowedGuilds.allows(message.guildId)) {
      return { ignore: `server ${message.guildId} is not in DISCORD_ALLOWED_GUILDS` };
    }
    if (config.channels === "off") return { ignore: "server messages are off (DISCORD_CHANNELS)" };
    if (config.channels === "mention" && !message.mentionsMe && !message.knownThread) {
      return { ignore: "not addressed to the bot" };
    }
  }
  if (!config.allowedUsers.allows(message.authorId)) {
    return { ignore: `user ${message.authorId} is not in DISCORD_ALLOWED_USERS` };
  }
  const text = message.content
    .replaceAll(`<@${me.id}>`, "")
    .replaceAll(`<@!${me.id}>`, "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
  if (text === "" && message.attachments.length === 0) return { ignore: "an empty message" };
  return {
    accept: {
      senderId: message.authorId,
      text,
      messageId: `${message.channelId}:${message.id}`,
      direct,
      startThread: !direct && !message.inThread && config.threads,
      attachments: message.attachments,
    },
  };
}

/** A slash command as the text the router reads: /new and /help are the daemon's commands. */
export function commandText(name: string): string | undefined {
  const command = name.trim().toLowerCase();
  return command === "new" || command === "help" ? `/${command}` : undefined;
}

/** A thread's name from the message that starts it: its first line, within Discord's 100 characters. */
export function threadName(text: string): string {
  const line = text.split("\n")[0]!.trim();
  if (line === "") return "Conversation with nexo";
  return line.length <= 90 ? line : `${line.slice(0, 89)}…`;
}
