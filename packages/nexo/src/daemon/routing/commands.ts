/**
 * Commands a person can type on any channel, answered by the daemon instead of the agent: every
 * chat network has its own way to start over, and people expect `/new` and `/help` to work the
 * same on all of them. A channel that has native slash commands (Slack, Discord, Telegram's
 * `/help@bot`) maps them onto these words before publishing; the router recognises them here.
 *
 *   /new   the next message starts a fresh conversation with the agent (the old one stays in the
 *          store, searchable and readable by the operator)
 *   /help  what the person can do here
 *
 * A message is a command only when it is the command word alone (case-insensitive, surrounding
 * blanks ignored): "/new idea: …" or a sentence quoting "/help" goes to the agent as usual.
 */

export type ChannelCommand = "new" | "help";

const COMMANDS: Readonly<Record<string, ChannelCommand>> = { "/new": "new", "/help": "help" };

/** The command `text` is, or undefined for an ordinary message. */
export function channelCommandOf(text: string): ChannelCommand | undefined {
  return COMMANDS[text.trim().toLowerCase()];
}

export const NEW_CONVERSATION_REPLY =
  "Started a new conversation: I no longer see what we said before. Send /help to see the commands.";

export const CHANNEL_HELP_REPLY = [
  "Write to me as you would to a person; I answer here.",
  "Commands:",
  "/new: start a new conversation (I forget what we said so far)",
  "/help: this message",
].join("\n");

/** What the daemon answers to `command`. */
export function commandReply(command: ChannelCommand): string {
  return command === "new" ? NEW_CONVERSATION_REPLY : CHANNEL_HELP_REPLY;
}
