/**
 * Which Slack events reach the agent, and as what: the pure decision, kept apart from Bolt so it
 * can be read (and tested) on its own.
 *
 * - Direct messages (`channel_type: im`) always, when the sender is allowed.
 * - In channels, by SLACK_CHANNELS: `mention` answers `app_mention` events only (the plain message
 *   event of the same post is ignored, so nothing is answered twice), `all` every message, `off`
 *   none. A post in a channel starts a thread: the conversation is that thread.
 * - Never: the app's own posts or other bots', edits, deletions, joins and other subtypes (a
 *   `file_share` is a message with files and counts), people outside SLACK_ALLOWED_USERS.
 */

import { formatAddress } from "./address.js";
import type { SlackConfig } from "./config.js";

/** The part of a Slack message or app_mention event read here. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  files?: SlackFile[];
}

export interface SlackFile {
  id?: string;
  name?: string;
  mimetype?: string;
  size?: number;
  url_private_download?: string;
  url_private?: string;
}

export interface AcceptedInbound {
  /** Where the conversation lives (address.ts), the router's contact and the reply's `to`. */
  contact: string;
  channel: string;
  threadTs: string | undefined;
  senderId: string;
  text: string;
  /** Unique per Slack message: how nexo recognises one delivered twice. */
  messageId: string;
  files: SlackFile[];
  direct: boolean;
}

export type InboundDecision = { accept: AcceptedInbound } | { ignore: string };

const COUNTED_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

export function decideInbound(
  event: SlackMessageEvent,
  me: { userId: string; botId: string | undefined },
  config: Pick<SlackConfig, "allowedUsers" | "channels">,
): InboundDecision {
  if (!COUNTED_SUBTYPES.has(event.subtype)) return { ignore: `a ${event.subtype} event` };
  if (event.bot_id !== undefined || event.user === undefined) return { ignore: "a bot's post" };
  if (event.user === me.userId) return { ignore: "the app's own post" };
  if (event.channel === undefined || event.ts === undefined) return { ignore: "no channel or timestamp" };
  const direct = event.channel_type === "im" || event.channel.startsWith("D");
  if (!direct) {
    if (config.channels === "off") return { ignore: "channel messages are off (SLACK_CHANNELS)" };
    const mention = event.type === "app_mention";
    if (config.channels === "mention" && !mention) return { ignore: "not addressed to the app" };
    if (config.channels === "all" && mention) return { ignore: "the mention's message event answers it" };
  }
  if (!config.allowedUsers.allows(event.user)) {
    return { ignore: `user ${event.user} is not in SLACK_ALLOWED_USERS` };
  }
  const threadTs = direct ? event.thread_ts : (event.thread_ts ?? event.ts);
  const text = (event.text ?? "")
    .replaceAll(`<@${me.userId}>`, "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
  const files = (event.files ?? []).filter((file) => file.url_private_download ?? file.url_private);
  if (text === "" && files.length === 0) return { ignore: "an empty message" };
  return {
    accept: {
      contact: formatAddress({ channel: event.channel, threadTs }),
      channel: event.channel,
      threadTs,
      senderId: event.user,
      text,
      messageId: `${event.channel}:${event.ts}`,
      files,
      direct,
    },
  };
}

/**
 * A slash command as the text the router reads: `/new` and `/help` (or an app command such as
 * `/nexo new`) become the daemon's commands; any other text is a message to the agent.
 */
export function commandText(command: string, text: string): string {
  const name = command.trim().toLowerCase();
  if (name === "/new" || name === "/help") return name;
  const rest = text.trim();
  if (/^(new|help)$/i.test(rest)) return `/${rest.toLowerCase()}`;
  return rest;
}
