/**
 * The messages the loopback channel carries, in both directions, and the checks on what clients
 * and the daemon hand it.
 */

/** What a client POSTs: who it is and what it says. */
export interface InboundPost {
  from: string;
  text: string;
}

/** The payload of the `plugin.inbound.loopback[.<instance>]` event the daemon's router reads. */
export interface InboundPayload {
  /** The sender: the contact a reply goes back to (`to` of the outbound message). */
  from: string;
  text: string;
  message_id: string;
  /** When the channel received it, ISO 8601 UTC. */
  timestamp: string;
}

/** A reply as clients receive it, from `GET /messages` or `GET /stream`. */
export interface DeliveredMessage {
  message_id: string;
  to: string;
  kind: "text" | "media";
  /** The text of a text message. */
  text?: string;
  /** The media link and optional caption of a media message. */
  url?: string;
  caption?: string;
  sent_at_unix: number;
}

/**
 * Contact ids travel in URLs (`?to=`) and in the daemon's session keys, so they are kept to a
 * safe alphabet: letters, digits and `_ . @ : + -`, 1 to 128 characters.
 */
export const CONTACT_ID_PATTERN = /^[\w.@:+-]{1,128}$/;
export const MAX_TEXT_CHARS = 16_000;

export function isContactId(value: unknown): value is string {
  return typeof value === "string" && CONTACT_ID_PATTERN.test(value);
}

/** A POST body, or the list of what is wrong with it. */
export function parseInboundPost(body: unknown): InboundPost | { problems: string[] } {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return { problems: ["the body must be a JSON object {from, text}"] };
  }
  const { from, text } = body as Record<string, unknown>;
  const problems: string[] = [];
  if (!isContactId(from)) problems.push(`from: must match ${CONTACT_ID_PATTERN}`);
  if (typeof text !== "string" || text.trim() === "") problems.push("text: must be a non-empty string");
  else if (text.length > MAX_TEXT_CHARS) problems.push(`text: must be at most ${MAX_TEXT_CHARS} characters`);
  return problems.length > 0 ? { problems } : { from: from as string, text: text as string };
}

/**
 * The reply an agent publishes on `plugin.outbound.loopback[.<instance>]`: `{to, text}` (the
 * reference daemon's shape), `{to, body}`, or `{to, url, caption?}` for media. Anything else
 * yields a reason to drop it.
 */
export function outboundFromEventPayload(
  payload: Record<string, unknown>,
): { to: string; text: string } | { to: string; url: string; caption?: string } | { problem: string } {
  const { to, text, body, url, caption } = payload;
  if (typeof to !== "string" || to === "") return { problem: "payload.to is not a non-empty string" };
  if (typeof text === "string") return { to, text };
  if (typeof body === "string") return { to, text: body };
  if (typeof url === "string") return typeof caption === "string" ? { to, url, caption } : { to, url };
  return { problem: "payload has no text, body or url" };
}
