/**
 * A broker event as it crosses the bridge (plugin contract §5.1, §5.4), in the wire's snake_case.
 *
 * `Event` is both the interface and a namespace of helpers, as upstream. Unlike the upstream SDK,
 * the host's `id`, `timestamp` and `session_id` are kept when present instead of being dropped,
 * so a plugin can see which session an event belongs to; `Event.new` leaves them out and the host
 * fills them in for published events.
 */
import { formatIssues } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { WireError } from "./errors.js";

export interface Event {
  topic: string;
  source: string;
  payload: Record<string, unknown>;
  correlation_id?: string;
  metadata?: Record<string, unknown>;
  /** Set by the host on the events it delivers. */
  id?: string;
  timestamp?: string;
  session_id?: string | null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export const Event = {
  /** A new event for `broker.publish`. */
  new(topic: string, source: string, payload: Record<string, unknown> = {}): Event {
    return { topic, source, payload };
  },

  /**
   * Reads an event off the wire. Throws WireError unless `topic` and `source` are non-empty strings
   * (and the optional fields have their types); a payload that is not an object becomes `{}`.
   */
  fromJson(value: unknown): Event {
    const parsed = plugin.BrokerEventSchema.safeParse(value);
    if (!parsed.success)
      throw new WireError(`invalid event: ${formatIssues(parsed.error.issues, "(event)")}`);
    const raw = parsed.data;
    const event: Event = {
      topic: raw.topic,
      source: raw.source,
      payload: isPlainObject(raw.payload) ? raw.payload : {},
    };
    if (typeof raw.correlation_id === "string") event.correlation_id = raw.correlation_id;
    if (raw.metadata !== undefined) event.metadata = raw.metadata;
    if (raw.id !== undefined) event.id = raw.id;
    if (raw.timestamp !== undefined) event.timestamp = raw.timestamp;
    if (raw.session_id !== undefined) event.session_id = raw.session_id;
    return event;
  },

  /** The wire form: `correlation_id` only when set, `metadata` only when non-empty. */
  toJson(event: Event): Record<string, unknown> {
    const out: Record<string, unknown> = {
      topic: event.topic,
      source: event.source,
      payload: event.payload ?? {},
    };
    if (typeof event.correlation_id === "string") out.correlation_id = event.correlation_id;
    if (event.metadata !== undefined && Object.keys(event.metadata).length > 0) out.metadata = event.metadata;
    if (event.id !== undefined) out.id = event.id;
    if (event.timestamp !== undefined) out.timestamp = event.timestamp;
    if (event.session_id !== undefined) out.session_id = event.session_id;
    return out;
  },
};
