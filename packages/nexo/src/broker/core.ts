/**
 * What the local and NATS brokers share besides topic rules: the subscription registry, the
 * broker-wide counters, the status and error listeners, the open/closed state and the drain on
 * close. Each broker composes one BrokerCore and adds only its transport.
 */
import type { Logger } from "../log.js";
import { BrokerError, describeError } from "./errors.js";
import { DEFAULT_MAX_EVENT_BYTES, type EncodedEvent, encodeEvent } from "./event.js";
import { QueuedSubscription } from "./subscription.js";
import { validatePattern, validateTopic } from "./topic.js";
import type {
  BrokerEvent,
  BrokerHandler,
  BrokerKind,
  BrokerReadiness,
  BrokerStats,
  SubscribeOptions,
  Unlisten,
} from "./types.js";

export const DEFAULT_QUEUE_DEPTH = 1024;
/** A sanity cap: a million waiting events is already far past any useful backlog. */
export const MAX_QUEUE_DEPTH = 1_000_000;
export const DEFAULT_DRAIN_TIMEOUT_MS = 5000;
const MAX_SUBSCRIPTION_NAME_LENGTH = 200;

/** Options both brokers take. */
export interface BrokerCommonOptions {
  /** Default per-subscriber queue depth (1024). */
  queueDepth?: number;
  /** Largest event accepted by publish, as UTF-8 JSON (1 MiB). */
  maxEventBytes?: number;
  logger: Logger;
}

/** How a transport plugs a new subscription in. */
export interface SubscriptionTransport {
  ready: Promise<void>;
  detach: () => void;
}

export class BrokerCore {
  readonly kind: BrokerKind;
  readonly logger: Logger;
  readonly defaultQueueDepth: number;
  maxEventBytes: number;
  readonly subscriptions = new Set<QueuedSubscription>();
  private closing = false;
  private published = 0;
  private publishFailed = 0;
  private delivered = 0;
  private dropped = 0;
  private handlerErrors = 0;
  private malformed = 0;
  private readonly statusListeners = new Set<(readiness: BrokerReadiness) => void>();
  private readonly errorListeners = new Set<(error: BrokerError) => void>();

  constructor(kind: BrokerKind, options: BrokerCommonOptions) {
    this.kind = kind;
    this.logger = options.logger;
    this.defaultQueueDepth = checkQueueDepth(options.queueDepth ?? DEFAULT_QUEUE_DEPTH, "queueDepth");
    const maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isSafeInteger(maxEventBytes) || maxEventBytes < 1) {
      throw new BrokerError(
        "invalid_option",
        `maxEventBytes must be a positive integer, got ${maxEventBytes}`,
      );
    }
    this.maxEventBytes = maxEventBytes;
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** The checks every publish makes, in the same order on both brokers. */
  preparePublish(topic: string, event: BrokerEvent): EncodedEvent {
    this.assertOpen();
    validateTopic(topic);
    return encodeEvent(event, this.maxEventBytes, topic);
  }

  countPublished(): void {
    this.published++;
  }

  /** Counts and builds the error for a publish the transport could not carry. */
  publishUnavailable(topic: string, reason: string): BrokerError {
    this.publishFailed++;
    return new BrokerError("unavailable", `cannot publish to "${topic}": ${reason}`, { topic });
  }

  /** Counts and announces a received message that is not a broker event (the transport logs it). */
  countMalformed(error: BrokerError): void {
    this.malformed++;
    this.emitError(error);
  }

  /** Validates and registers a subscription; the transport says how it goes live and away. */
  addSubscription(
    pattern: string,
    handler: BrokerHandler,
    options: SubscribeOptions | undefined,
    transport: (subscription: () => QueuedSubscription | undefined) => SubscriptionTransport,
  ): QueuedSubscription {
    this.assertOpen();
    validatePattern(pattern);
    if (typeof handler !== "function") throw new BrokerError("invalid_option", "handler must be a function");
    const queueDepth = checkQueueDepth(options?.queueDepth ?? this.defaultQueueDepth, "queueDepth");
    const name = checkName(options?.name ?? pattern);
    let created: QueuedSubscription | undefined;
    const { ready, detach } = transport(() => created);
    const subscription = new QueuedSubscription({
      name,
      pattern,
      queueDepth,
      handler,
      ready,
      logger: this.logger,
      observer: {
        delivered: () => {
          this.delivered++;
        },
        dropped: () => {
          this.dropped++;
        },
        handlerFailed: (error) => {
          this.handlerErrors++;
          this.emitError(error);
        },
      },
      detach: () => {
        this.subscriptions.delete(subscription);
        detach();
      },
    });
    created = subscription;
    this.subscriptions.add(subscription);
    return subscription;
  }

  stats(readiness: BrokerReadiness): BrokerStats {
    return {
      kind: this.kind,
      ready: readiness.ready,
      published: this.published,
      publishFailed: this.publishFailed,
      delivered: this.delivered,
      dropped: this.dropped,
      handlerErrors: this.handlerErrors,
      malformed: this.malformed,
      subscriptions: [...this.subscriptions].map((subscription) => subscription.stats()),
    };
  }

  onStatus(listener: (readiness: BrokerReadiness) => void): Unlisten {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  onError(listener: (error: BrokerError) => void): Unlisten {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  emitStatus(readiness: BrokerReadiness): void {
    for (const listener of [...this.statusListeners]) this.callListener(listener, readiness);
  }

  emitError(error: BrokerError): void {
    for (const listener of [...this.errorListeners]) this.callListener(listener, error);
  }

  /** Refuses new publishes and subscriptions from now on. Returns false if already closing. */
  beginClose(): boolean {
    if (this.closing) return false;
    this.closing = true;
    return true;
  }

  /**
   * Waits, up to `timeoutMs` in all, for every subscription to hand its queue to its handler,
   * then ends them all. Events still queued at the deadline are discarded, and said so.
   */
  async drainSubscriptions(timeoutMs: number): Promise<void> {
    const subscriptions = [...this.subscriptions];
    const outcomes = await Promise.all(subscriptions.map((subscription) => subscription.whenIdle(timeoutMs)));
    subscriptions.forEach((subscription, index) => {
      if (outcomes[index] === false) {
        this.logger.warn(
          { subscription: subscription.name, discarded: subscription.queued },
          `subscriber "${subscription.name}" did not finish within ${timeoutMs} ms of close; discarding ${subscription.queued} queued events`,
        );
      }
      subscription.unsubscribe();
    });
  }

  private assertOpen(): void {
    if (this.closing) throw new BrokerError("closed", `the ${this.kind} broker is closed`);
  }

  /** A listener that throws must not break the broker or keep the next listener from hearing. */
  private callListener<T>(listener: (value: T) => void, value: T): void {
    try {
      listener(value);
    } catch (error) {
      this.logger.warn({ err: error }, `broker listener threw: ${describeError(error)}`);
    }
  }
}

export function checkDrainTimeout(timeoutMs: number | undefined): number {
  const value = timeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  if (!Number.isFinite(value) || value < 0) {
    throw new BrokerError("invalid_option", `drainTimeoutMs must be a non-negative number, got ${value}`);
  }
  return value;
}

function checkQueueDepth(depth: unknown, key: string): number {
  if (typeof depth !== "number" || !Number.isSafeInteger(depth) || depth < 1 || depth > MAX_QUEUE_DEPTH) {
    throw new BrokerError(
      "invalid_option",
      `${key} must be an integer from 1 to ${MAX_QUEUE_DEPTH}, got ${JSON.stringify(depth)}`,
    );
  }
  return depth;
}

function checkName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_SUBSCRIPTION_NAME_LENGTH) {
    throw new BrokerError(
      "invalid_option",
      `subscription name must be a string of 1 to ${MAX_SUBSCRIPTION_NAME_LENGTH} characters`,
    );
  }
  return name;
}
