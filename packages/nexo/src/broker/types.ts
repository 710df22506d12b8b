/**
 * The broker's contract: the event it carries and the interface both implementations (in-process
 * and NATS) honour with identical semantics. Lower layer: imports nothing above the wire package.
 */
import { z } from "zod";
import type { BrokerError } from "./errors.js";

/**
 * A broker event (plugin contract §5.1, §5.4). Stricter than the wire schema of the bridge: what
 * travels on the broker is complete, because the host fills what a plugin leaves out before
 * publishing. `id` is any 8-4-4-4-12 hex id (we mint UUID v7; the contract's own examples and
 * other implementations' ids are not always RFC 9562 variants, and a subscriber on a shared NATS
 * server must not discard them). Fields we do not know (`correlation_id`, `metadata`, …) pass
 * through untouched.
 */
export const BrokerEventSchema = z.looseObject({
  id: z.guid({ error: "must be a UUID (8-4-4-4-12 hex digits)" }),
  timestamp: z.iso.datetime({
    offset: true,
    error: "must be an RFC 3339 date-time with a Z or ±hh:mm offset",
  }),
  topic: z.string().min(1),
  source: z.string().min(1),
  session_id: z.string().nullable().optional(),
  payload: z.record(z.string(), z.unknown(), { error: "must be a JSON object" }),
});
export type BrokerEvent = z.infer<typeof BrokerEventSchema>;

/** What a publisher must supply to `createEvent`; the rest is minted. */
export interface BrokerEventInit {
  topic: string;
  source: string;
  payload?: Record<string, unknown>;
  session_id?: string | null;
  /** Defaults to a fresh UUID v7. */
  id?: string;
  /** Defaults to now, RFC 3339 in UTC. */
  timestamp?: string;
  /** Extra fields (`correlation_id`, `metadata`, …) travel with the event. */
  [extra: string]: unknown;
}

/**
 * Receives one event. `topic` is the topic it was published on, which the subscription's pattern
 * matched; it need not equal `event.topic`. The event is deeply frozen: it may be shared with
 * other subscribers, so a handler that wants to change it must copy it. A handler may be async;
 * the next event of the same subscription waits until it settles.
 */
export type BrokerHandler = (event: BrokerEvent, topic: string) => void | Promise<void>;

export interface SubscribeOptions {
  /**
   * How many events may wait for this subscriber while its handler is busy; beyond that, new
   * events are dropped and counted. Defaults to the broker's queue depth (1024 unless configured).
   */
  queueDepth?: number;
  /** For logs and stats, e.g. `plugin:slack`. Defaults to the pattern. */
  name?: string;
}

export interface Subscription {
  readonly name: string;
  readonly pattern: string;
  /** The queue bound this subscription was created with. */
  readonly queueDepth: number;
  /**
   * Settles once the subscription is live: at once for the local broker; for NATS once the server
   * has acknowledged it, which matters when the publisher is another connection. Never rejects:
   * if the connection drops first, it settles anyway and the client re-subscribes on reconnect.
   */
  readonly ready: Promise<void>;
  /** Events waiting for the handler now (the one being handled is not counted). */
  readonly queued: number;
  /** Events dropped because the queue was full. */
  readonly dropped: number;
  /** Events handed to the handler (whether or not it threw). */
  readonly delivered: number;
  /** Handler calls that threw or rejected. */
  readonly handlerErrors: number;
  /**
   * Stops delivery at once: events still queued are discarded and no handler call starts after
   * this returns (one already running is not interrupted). Idempotent.
   */
  unsubscribe(): void;
}

export interface SubscriptionStats {
  name: string;
  pattern: string;
  queueDepth: number;
  queued: number;
  dropped: number;
  delivered: number;
  handlerErrors: number;
}

export interface BrokerStats {
  kind: BrokerKind;
  ready: boolean;
  /** Events accepted by `publish`. */
  published: number;
  /** `publish` calls refused because the broker could not carry the event (NATS disconnected). */
  publishFailed: number;
  /** Handler calls started, over every subscription past and present. */
  delivered: number;
  /** Events dropped on full subscriber queues, over every subscription past and present. */
  dropped: number;
  handlerErrors: number;
  /** NATS messages on a subscribed subject that were not broker events (skipped). */
  malformed: number;
  subscriptions: SubscriptionStats[];
}

export type BrokerKind = "local" | "nats";

export interface BrokerReadiness {
  /** True when published events can reach subscribers (what /readyz reports). */
  ready: boolean;
  state: "connected" | "disconnected" | "closed";
  /** For humans: where the broker is connected, or why it is not. */
  detail: string;
}

export type Unlisten = () => void;

export interface Broker {
  readonly kind: BrokerKind;
  /**
   * Delivers `event` to every subscription whose pattern matches `topic`, at most once each.
   * Returns without waiting for any handler. Throws BrokerError: `invalid_topic`,
   * `invalid_event`, `too_large` (bad input), `unavailable` (NATS disconnected; the event is not
   * buffered), `closed`.
   */
  publish(topic: string, event: BrokerEvent): void;
  /** Throws BrokerError `invalid_pattern`, `invalid_option` or `closed`. */
  subscribe(pattern: string, handler: BrokerHandler, options?: SubscribeOptions): Subscription;
  stats(): BrokerStats;
  readiness(): BrokerReadiness;
  /** Called on every change of readiness (disconnect, reconnect, close). */
  onStatus(listener: (readiness: BrokerReadiness) => void): Unlisten;
  /**
   * Called for problems nobody else can be told about: a handler that threw (`handler_failed`),
   * an undecodable NATS message (`malformed_message`), a transport error (`transport`). Each is
   * also logged.
   */
  onError(listener: (error: BrokerError) => void): Unlisten;
  /**
   * Stops accepting publishes and subscriptions, lets queued events reach their handlers for up
   * to `drainTimeoutMs` (default 5000), then discards the rest and disconnects. Idempotent.
   */
  close(options?: { drainTimeoutMs?: number }): Promise<void>;
}
