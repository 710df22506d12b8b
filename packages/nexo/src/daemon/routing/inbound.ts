/**
 * What an inbound channel message looks like to the router. Channel plugins publish
 * `broker.publish` on `plugin.inbound.<kind>[.<instance>]`; the payload names the sender and the
 * text. Field names vary between channels, so a few common spellings are accepted (documented in
 * docs/operations.md, "Routing").
 */
import type { BrokerEvent } from "../../broker/types.js";
import type { InboxAttachment } from "../../store/inbox.js";

/** A file the channel plugin downloaded for the message (`attachments[].path` of its payload). */
export type InboundAttachment = InboxAttachment;

/** More files than this on one message are left to the text that names them. */
export const MAX_INBOUND_ATTACHMENTS = 16;

export interface InboundMessage {
  kind: string;
  instance: string | undefined;
  /** Who wrote: the conversation partner, and where replies go. */
  contact: string;
  /** The account of ours it was sent to (e.g. our bot or phone number), when the channel has several. */
  account: string | undefined;
  text: string;
  /** Files downloaded by the plugin; the text names them too, so a file nexo cannot read is not lost. */
  attachments: readonly InboundAttachment[];
  messageId: string | undefined;
  senderId: string | undefined;
  /** The broker event's id: what identifies a message whose channel gave it no id. */
  eventId: string;
}

export class InboundMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InboundMessageError";
  }
}

const INBOUND_PREFIX = "plugin.inbound.";

/** `plugin.inbound.<kind>[.<instance>]` → kind and instance; anything else is undefined. */
export function parseInboundTopic(topic: string): { kind: string; instance: string | undefined } | undefined {
  if (!topic.startsWith(INBOUND_PREFIX)) return undefined;
  const [kind, instance, ...rest] = topic.slice(INBOUND_PREFIX.length).split(".");
  if (!kind || rest.length > 0 || instance === "") return undefined;
  return { kind, instance };
}

function firstString(payload: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = payload[key];
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number" && Number.isFinite(value)) return String(value);
  }
  return undefined;
}

export function parseInboundEvent(topic: string, event: BrokerEvent): InboundMessage {
  const where = parseInboundTopic(topic);
  if (!where) throw new InboundMessageError(`not an inbound topic: ${topic}`);
  const payload = (event.payload ?? {}) as Record<string, unknown>;
  const contact = firstString(payload, ["from", "contact", "sender_id", "chat_id", "user"]);
  if (!contact)
    throw new InboundMessageError(`inbound message on ${topic} names no sender (from/contact/sender_id)`);
  const text = firstString(payload, ["text", "body", "message", "content"]);
  if (text === undefined)
    throw new InboundMessageError(`inbound message on ${topic} carries no text (text/body)`);
  if (typeof event.id !== "string" || event.id === "")
    throw new InboundMessageError(`inbound message on ${topic} has no event id`);
  // Named one by one: spreading `where` into this literal took V8's slow copy path, ~8 µs a message.
  return {
    kind: where.kind,
    instance: where.instance,
    contact,
    account: firstString(payload, ["account", "to_account", "bot_id"]),
    text,
    attachments: attachmentsOf(payload.attachments),
    messageId: firstString(payload, ["message_id", "id"]),
    senderId: firstString(payload, ["sender_id", "from"]),
    eventId: event.id,
  };
}

/**
 * The local files of the payload's `attachments` (the channels' shared attachment shape). Lenient
 * like the rest of the payload: an entry without a usable `path` (a remote URL, a malformed one) is
 * skipped, never a reason to refuse the message — its text names what came with it.
 */
function attachmentsOf(value: unknown): InboundAttachment[] {
  if (!Array.isArray(value)) return [];
  const files: InboundAttachment[] = [];
  for (const entry of value) {
    if (files.length === MAX_INBOUND_ATTACHMENTS) break;
    if (typeof entry !== "object" || entry === null) continue;
    const item = entry as Record<string, unknown>;
    const path = item.path;
    if (typeof path !== "string" || path === "" || path.length > 4096 || path.includes("\0")) continue;
    const text = (key: string) =>
      typeof item[key] === "string" && item[key] !== "" ? (item[key] as string) : undefined;
    const kind = text("kind");
    const mimeType = text("mime_type");
    const fileName = text("file_name");
    files.push({
      path,
      ...(kind === undefined ? {} : { kind }),
      ...(mimeType === undefined ? {} : { mimeType }),
      ...(fileName === undefined ? {} : { fileName }),
    });
  }
  return files;
}

/**
 * The key under which the durable inbox recognises a message delivered twice: the channel's own
 * message id when it gives one (a redelivery by the plugin carries the same id under a new event
 * id), otherwise the broker event's id (a redelivery of the same event).
 */
export function inboundDedupKey(message: InboundMessage): string {
  const channel = message.instance ? `${message.kind}.${message.instance}` : message.kind;
  return message.messageId === undefined
    ? `event\u0000${message.eventId}`
    : `message\u0000${channel}\u0000${message.account ?? ""}\u0000${message.messageId}`;
}
