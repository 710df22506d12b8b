/**
 * What an incoming Telegram message becomes, decided without I/O: accepted (with the text the
 * agent reads and the files to download) or ignored (with the reason, for the log).
 *
 * - Per-chat sessions: the broker event's `contact` is the chat id, so a private chat and each
 *   group are one conversation each; `sender_id` is the person. Replies go to the chat.
 * - The allowlist (TELEGRAM_ALLOWED_USERS) is checked on the sender, in private chats and groups.
 * - In groups the bot answers only when addressed (TELEGRAM_GROUPS=mention): an @mention of the
 *   bot, a reply to one of its messages, or a /command@bot. The mention is taken out of the text,
 *   and the sender's name is put in front of it (several people talk in a group).
 * - A message that replies to another one carries the quoted text, so the agent sees what it
 *   answers.
 */
import type { Allowlist } from "@nexo/channels-common";
import type { Message, MessageEntity, UserFromGetMe } from "grammy/types";
import type { GroupMode } from "./config.js";

/** A file in the message, still on Telegram's side. */
export interface RemoteFile {
  kind: "image" | "voice" | "audio" | "video" | "document";
  file_id: string;
  file_name?: string;
  mime_type?: string;
  size_bytes?: number;
}

export interface AcceptedMessage {
  chatId: string;
  chatType: Message["chat"]["type"];
  senderId: string;
  senderName: string;
  /** `<chat id>:<message id>`: message ids are unique per chat only. */
  messageId: string;
  telegramMessageId: number;
  /** What the person wrote (mention removed), with the group prefix and the quoted reply. */
  text: string;
  files: RemoteFile[];
  replyToMessageId?: number;
}

export type InboundDecision = { accept: AcceptedMessage } | { ignore: string };

export interface InboundRules {
  allowedUsers: Allowlist;
  groups: GroupMode;
}

const isGroup = (type: string): boolean => type === "group" || type === "supergroup";

function displayName(user: { first_name: string; last_name?: string; username?: string }): string {
  const name = [user.first_name, user.last_name].filter(Boolean).join(" ");
  return user.username === undefined ? name : `${name} (@${user.username})`;
}

/** The entities that address this bot, and whether the message does at all. */
function addressing(
  text: string,
  entities: readonly MessageEntity[],
  message: Message,
  bot: UserFromGetMe,
): { addressed: boolean; spans: Array<[number, number]> } {
  const handle = `@${bot.username}`.toLowerCase();
  const spans: Array<[number, number]> = [];
  let addressed = message.reply_to_message?.from?.id === bot.id;
  for (const entity of entities) {
    const piece = text.slice(entity.offset, entity.offset + entity.length);
    if (entity.type === "mention" && piece.toLowerCase() === handle) {
      addressed = true;
      spans.push([entity.offset, entity.offset + entity.length]);
    } else if (entity.type === "text_mention" && entity.user.id === bot.id) {
      addressed = true;
    } else if (entity.type === "bot_command" && piece.toLowerCase().endsWith(handle)) {
      addressed = true;
      // "/help@my_bot" → "/help"
      spans.push([entity.offset + piece.length - handle.length, entity.offset + entity.length]);
    }
  }
  return { addressed, spans };
}

function withoutSpans(text: string, spans: Array<[number, number]>): string {
  let out = text;
  for (const [start, end] of [...spans].sort((a, b) => b[0] - a[0]))
    out = out.slice(0, start) + out.slice(end);
  return out.replace(/[ \t]{2,}/g, " ").trim();
}

function filesOf(message: Message): RemoteFile[] {
  const files: RemoteFile[] = [];
  if (message.photo !== undefined && message.photo.length > 0) {
    const largest = message.photo[message.photo.length - 1]!;
    files.push({
      kind: "image",
      file_id: largest.file_id,
      mime_type: "image/jpeg",
      ...(largest.file_size === undefined ? {} : { size_bytes: largest.file_size }),
    });
  }
  const plain = [
    ["document", message.document],
    ["voice", message.voice],
    ["audio", message.audio],
    ["video", message.video],
  ] as const;
  for (const [kind, file] of plain) {
    if (file === undefined) continue;
    const named = file as { file_name?: string; mime_type?: string };
    files.push({
      kind,
      file_id: file.file_id,
      ...(named.file_name === undefined ? {} : { file_name: named.file_name }),
      ...(named.mime_type === undefined ? {} : { mime_type: named.mime_type }),
      ...(file.file_size === undefined ? {} : { size_bytes: file.file_size }),
    });
  }
  return files;
}

function quoted(message: Message): string | undefined {
  const original = message.reply_to_message;
  if (original === undefined) return undefined;
  const body =
    original.text ??
    original.caption ??
    (original.photo ? "[a photo]" : original.document ? "[a document]" : "[a message]");
  const who =
    original.from === undefined ? "someone" : original.from.is_bot ? "you" : displayName(original.from);
  const short = body.length > 300 ? `${body.slice(0, 300)}…` : body;
  return `(replying to ${who}: "${short}")`;
}

export function decideInbound(message: Message, bot: UserFromGetMe, rules: InboundRules): InboundDecision {
  const from = message.from;
  if (from === undefined) return { ignore: "no sender (a channel post)" };
  if (from.is_bot) return { ignore: `sent by a bot (${from.id})` };
  const who = `user ${from.id}${from.username === undefined ? "" : ` (@${from.username})`}`;
  if (!rules.allowedUsers.allows(from.id, from.username)) {
    return { ignore: `${who} is not in TELEGRAM_ALLOWED_USERS` };
  }
  const raw = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  let text = raw.trim();
  const group = isGroup(message.chat.type);
  if (group) {
    if (rules.groups === "off") return { ignore: `group ${message.chat.id}: TELEGRAM_GROUPS is off` };
    const { addressed, spans } = addressing(raw, entities, message, bot);
    if (rules.groups === "mention" && !addressed) {
      return { ignore: `group ${message.chat.id}: the bot was not mentioned or replied to` };
    }
    text = withoutSpans(raw, spans);
  } else {
    text = withoutSpans(raw, addressing(raw, entities, message, bot).spans);
  }
  const files = filesOf(message);
  if (text === "" && files.length === 0)
    return { ignore: `${who}: nothing the agent can read (a sticker, a poll, …)` };
  const parts = [quoted(message), group ? `${displayName(from)}: ${text}` : text].filter(
    (part): part is string => part !== undefined && part.trim() !== "",
  );
  return {
    accept: {
      chatId: String(message.chat.id),
      chatType: message.chat.type,
      senderId: String(from.id),
      senderName: displayName(from),
      messageId: `${message.chat.id}:${message.message_id}`,
      telegramMessageId: message.message_id,
      text: parts.join("\n"),
      files,
      ...(message.reply_to_message === undefined
        ? {}
        : { replyToMessageId: message.reply_to_message.message_id }),
    },
  };
}
