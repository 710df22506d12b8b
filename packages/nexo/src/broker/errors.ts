/**
 * The broker's one error type. Callers branch on `code`; `message` is for the operator's log.
 */

export type BrokerErrorCode =
  /** A topic given to `publish` breaks the topic rules (see topic.ts). */
  | "invalid_topic"
  /** A pattern given to `subscribe` breaks the pattern rules (see topic.ts). */
  | "invalid_pattern"
  /** An event is not a valid broker event, or cannot be encoded as JSON. */
  | "invalid_event"
  /** An encoded event is larger than the broker accepts (and than a NATS server would carry). */
  | "too_large"
  /** A subscribe option (queue depth, name) is out of range. */
  | "invalid_option"
  /** The broker cannot carry the event right now (NATS disconnected); the event was not sent. */
  | "unavailable"
  /** The broker has been closed. */
  | "closed"
  /** The first connection to the NATS server(s) failed. */
  | "connect_failed"
  /** The broker config is unusable (bad URL, unreadable creds file). */
  | "invalid_config"
  /** A subscriber's handler threw or rejected; the subscription keeps running. */
  | "handler_failed"
  /** A message received from NATS is not a broker event; it was skipped. */
  | "malformed_message"
  /** The NATS connection reported an error (permissions violation, connection closed for good). */
  | "transport";

export interface BrokerErrorDetails {
  /** The topic or pattern involved, when there is one. */
  topic?: string;
  /** The subscription's name, for errors raised on the receiving side. */
  subscription?: string;
  cause?: unknown;
}

export class BrokerError extends Error {
  override readonly name = "BrokerError";
  readonly code: BrokerErrorCode;
  readonly topic: string | undefined;
  readonly subscription: string | undefined;

  constructor(code: BrokerErrorCode, message: string, details: BrokerErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.topic = details.topic;
    this.subscription = details.subscription;
  }
}

/** A readable one-liner for anything thrown, for log lines and wrapped messages. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
