/**
 * Making, checking and encoding broker events. Both brokers pass every published event through
 * `encodeEvent`, so the local broker hands subscribers exactly what a NATS subscriber would
 * decode: the JSON form of the event (undefined members gone, NaN as null), checked against the
 * schema, deeply frozen and detached from the publisher's object.
 */
import { formatIssues } from "@nexo/wire";
import { v7 as uuidv7 } from "uuid";
import { isoTime } from "../iso-time.js";
import { BrokerError, describeError } from "./errors.js";
import { type BrokerEvent, type BrokerEventInit, BrokerEventSchema } from "./types.js";

/** The plugin frame cap (1 MiB) and a NATS server's default max_payload agree on this. */
export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

/** A complete event from what the publisher knows: `id` (UUID v7) and `timestamp` are minted. */
export function createEvent(init: BrokerEventInit): BrokerEvent {
  const { id, timestamp, payload, ...rest } = init;
  return {
    ...rest,
    id: id ?? uuidv7(),
    timestamp: timestamp ?? isoTime(),
    payload: payload ?? {},
  };
}

export interface EncodedEvent {
  /** The event as subscribers will see it: validated, deeply frozen, sharing nothing with the input. */
  event: BrokerEvent;
  /** Its JSON text, as it travels over NATS. */
  json: string;
}

/**
 * Validates and encodes an event for publishing. Throws BrokerError `invalid_event` (not JSON, or
 * not a broker event) or `too_large` (JSON longer than `maxBytes` in UTF-8).
 */
export function encodeEvent(input: unknown, maxBytes: number, topic: string): EncodedEvent {
  let json: string | undefined;
  try {
    json = JSON.stringify(input);
  } catch (error) {
    throw new BrokerError("invalid_event", `event cannot be encoded as JSON: ${describeError(error)}`, {
      topic,
      cause: error,
    });
  }
  if (json === undefined) throw new BrokerError("invalid_event", "event must be a JSON object", { topic });
  // UTF-8 is at most 3 bytes per UTF-16 unit: skip the exact count for the common small event.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json, "utf8");
    if (bytes > maxBytes) {
      throw new BrokerError(
        "too_large",
        `event is ${bytes} bytes of JSON, more than the ${maxBytes} allowed`,
        {
          topic,
        },
      );
    }
  }
  const event = checkEvent(JSON.parse(json), "invalid_event", topic);
  return { event, json };
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Decodes an event received from NATS. Throws BrokerError `malformed_message`. */
export function decodeEvent(data: Uint8Array, topic: string): BrokerEvent {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (error) {
    throw new BrokerError("malformed_message", `message is not UTF-8 JSON: ${describeError(error)}`, {
      topic,
      cause: error,
    });
  }
  return checkEvent(value, "malformed_message", topic);
}

function checkEvent(value: unknown, code: "invalid_event" | "malformed_message", topic: string): BrokerEvent {
  const result = BrokerEventSchema.safeParse(value);
  if (!result.success) {
    const what = code === "invalid_event" ? "event" : "message";
    throw new BrokerError(
      code,
      `${what} is not a broker event: ${formatIssues(result.error.issues, "(event)")}`,
      {
        topic,
      },
    );
  }
  return deepFreeze(result.data);
}

/** Freezes a JSON value and everything in it; JSON has no cycles, so plain recursion ends. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
