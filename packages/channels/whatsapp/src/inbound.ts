/**
 * Which WhatsApp messages reach the agent, and as what: the pure decision on one message Baileys
 * delivered, kept apart from the socket so it can be read (and tested) on its own.
 *
 * - Direct chats always, when the sender is allowed (WHATSAPP_ALLOWED_NUMBERS); group chats only
 *   with WHATSAPP_GROUPS=all, and then only from allowed members.
 * - Never: the account's own messages (sent from the phone), status updates, broadcasts, AI bots'
 *   answers (they belong to whatsapp/bot/send's caller, not to the agent), protocol messages
 *   (deletions, edits, reactions, receipts) and anything without text or media.
 *
 * WhatsApp may name a person by their phone-number JID or by a privacy id (`…@lid`); both forms
 * the message carries are checked against the allowlist.
 */
import { type AttachmentKind, kindFromMime } from "@nexo/channels-common";
import type { proto, WAMessage } from "baileys";
import { isGroup, stripDevice } from "./address.js";
import { baileys } from "./baileys.js";
import type { WhatsAppConfig } from "./config.js";

export interface InboundMedia {
  kind: AttachmentKind;
  mime: string | undefined;
  fileName: string | undefined;
  size: number | undefined;
}

export interface AcceptedInbound {
  /** The chat's JID: the router's contact and the reply's `to`. */
  chat: string;
  sender: string;
  group: boolean;
  text: string;
  /** Unique per WhatsApp message: how nexo recognises one delivered twice. */
  messageId: string;
  media: InboundMedia | undefined;
  pushName: string | undefined;
}

export type InboundDecision = { accept: AcceptedInbound } | { ignore: string };

export function decideInbound(
  message: WAMessage,
  config: Pick<WhatsAppConfig, "allowed" | "groups">,
): InboundDecision {
  const key = message.key;
  const chat = key.remoteJid ?? undefined;
  if (chat === undefined || key.id === undefined || key.id === null) return { ignore: "no chat or id" };
  if (key.fromMe) return { ignore: "the account's own message" };
  if (chat === "status@broadcast" || chat.endsWith("@broadcast")) return { ignore: "a status or broadcast" };
  if (chat.endsWith("@bot")) return { ignore: "an AI bot's answer" };
  if (chat.endsWith("@newsletter")) return { ignore: "a channel (newsletter) post" };
  const group = isGroup(chat);
  if (group && config.groups === "off") return { ignore: "group messages are off (WHATSAPP_GROUPS)" };
  const senderIds = (group ? [key.participant, key.participantAlt] : [chat, key.remoteJidAlt])
    .filter((id): id is string => typeof id === "string" && id !== "")
    .map(stripDevice);
  const sender = senderIds[0];
  if (sender === undefined) return { ignore: "no sender" };
  if (!config.allowed.allows(...senderIds)) return { ignore: `${sender} is not in WHATSAPP_ALLOWED_NUMBERS` };
  const content = baileys().normalizeMessageContent(message.message);
  if (content === undefined || content === null) return { ignore: "no content" };
  const media = mediaOf(content);
  const text = textOf(content).trim();
  if (text === "" && media === undefined) return { ignore: "nothing the agent can read (no text or media)" };
  return {
    accept: {
      chat: stripDevice(chat),
      sender,
      group,
      text,
      messageId: `${chat}:${key.id}`,
      media,
      pushName: message.pushName ?? undefined,
    },
  };
}

function textOf(content: proto.IMessage): string {
  return (
    content.conversation ??
    content.extendedTextMessage?.text ??
    content.imageMessage?.caption ??
    content.videoMessage?.caption ??
    content.documentMessage?.caption ??
    ""
  );
}

function mediaOf(content: proto.IMessage): InboundMedia | undefined {
  const size = (value: unknown): number | undefined => (value == null ? undefined : Number(value));
  if (content.imageMessage) {
    const m = content.imageMessage;
    return { kind: "image", mime: m.mimetype ?? "image/jpeg", fileName: undefined, size: size(m.fileLength) };
  }
  if (content.videoMessage) {
    const m = content.videoMessage;
    return { kind: "video", mime: m.mimetype ?? "video/mp4", fileName: undefined, size: size(m.fileLength) };
  }
  if (content.audioMessage) {
    const m = content.audioMessage;
    return {
      kind: m.ptt ? "voice" : "audio",
      mime: m.mimetype ?? "audio/ogg",
      fileName: undefined,
      size: size(m.fileLength),
    };
  }
  if (content.documentMessage) {
    const m = content.documentMessage;
    const mime = m.mimetype ?? undefined;
    const kind = kindFromMime(mime);
    return {
      kind: kind === "image" || kind === "audio" || kind === "video" ? kind : "document",
      mime,
      fileName: m.fileName ?? undefined,
      size: size(m.fileLength),
    };
  }
  if (content.stickerMessage) {
    const m = content.stickerMessage;
    return { kind: "image", mime: m.mimetype ?? "image/webp", fileName: undefined, size: size(m.fileLength) };
  }
  return undefined;
}

/** The extension a file of this MIME type gets when WhatsApp sent no name. */
export function extensionOf(mime: string | undefined): string {
  const base = (mime ?? "").split(";")[0]!.trim();
  const known: Record<string, string> = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/webp": "webp",
    "image/gif": "gif",
    "audio/ogg": "ogg",
    "audio/mpeg": "mp3",
    "audio/mp4": "m4a",
    "video/mp4": "mp4",
    "application/pdf": "pdf",
    "text/plain": "txt",
  };
  return known[base] ?? "bin";
}
