/**
 * What an inbound channel message looks like to the router. Channel plugins publish
 * `broker.publish` on `plugin.inbound.<kind>[.<instance>]`; the payload names the sender and the
 * text. Field names vary between channels, so a few common spellings are accepted (documented in
 * docs/operations.md, "Routing").
 */
import type { BrokerEvent } from "../../broker/types.js";

export interface InboundMessage {
  kind: string;
  instance: string | undefined;
  /** Who wrote: the conversation partner, and where replies go. */
  contact: string;
  /** The account of ours it was sent to (e.g. our bot or phone number), when the channel has several. */
  account: string | undefined;
  text: string;
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
  return {
    ...where,
    contact,
    account: firstString(payload, ["account", "to_account", "bot_id"]),
    text,
    messageId: firstString(payload, ["message_id", "id"]),
    senderId: firstString(payload, ["sender_id", "from"]),
    eventId: event.id,
  };
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
