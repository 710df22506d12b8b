/**
 * One subscriber: a handler behind its own bounded delivery queue. Shared by both brokers; what
 * differs between them is only how events reach `offer` (a loop over local subscriptions, or a
 * NATS subscription callback).
 */
import type { Logger } from "../log.js";
import { BrokerError, describeError } from "./errors.js";
import { DeliveryQueue } from "./queue.js";
import type { BrokerEvent, BrokerHandler, Subscription, SubscriptionStats } from "./types.js";

export interface Delivery {
  event: BrokerEvent;
  topic: string;
}

/** Where a subscription reports what the broker as a whole counts and announces. */
export interface SubscriptionObserver {
  delivered(): void;
  dropped(): void;
  handlerFailed(error: BrokerError): void;
}

export interface QueuedSubscriptionInit {
  name: string;
  pattern: string;
  queueDepth: number;
  handler: BrokerHandler;
  ready: Promise<void>;
  observer: SubscriptionObserver;
  logger: Logger;
  /** Releases what the broker holds for this subscription (the local list entry, the NATS sub). */
  detach: () => void;
}

export class QueuedSubscription implements Subscription {
  readonly name: string;
  readonly pattern: string;
  readonly queueDepth: number;
  readonly ready: Promise<void>;
  private readonly queue: DeliveryQueue<Delivery>;
  private readonly detach: () => void;
  private readonly logger: Logger;
  private active = true;
  /** Drops since the queue last ran dry: logged once when dropping starts and once when it ends. */
  private dropsInBurst = 0;

  constructor(init: QueuedSubscriptionInit) {
    this.name = init.name;
    this.pattern = init.pattern;
    this.queueDepth = init.queueDepth;
    this.ready = init.ready;
    this.detach = init.detach;
    this.logger = init.logger;
    const { handler, observer } = init;
    this.queue = new DeliveryQueue<Delivery>({
      depth: init.queueDepth,
      deliver: (delivery) => {
        observer.delivered();
        return handler(delivery.event, delivery.topic);
      },
      onDeliveryError: (error, delivery) => {
        const failure = new BrokerError(
          "handler_failed",
          `subscriber "${this.name}" failed on topic "${delivery.topic}": ${describeError(error)}`,
          { topic: delivery.topic, subscription: this.name, cause: error },
        );
        this.logger.warn({ err: error, subscription: this.name, topic: delivery.topic }, failure.message);
        observer.handlerFailed(failure);
      },
      onDrop: (delivery, dropped) => {
        observer.dropped();
        if (this.dropsInBurst++ === 0) {
          this.logger.warn(
            {
              subscription: this.name,
              pattern: this.pattern,
              topic: delivery.topic,
              queue_depth: this.queueDepth,
            },
            `subscriber "${this.name}" is too slow: its queue of ${this.queueDepth} is full, dropping events (${dropped} dropped so far)`,
          );
        }
      },
      onIdle: () => {
        if (this.dropsInBurst === 0) return;
        this.logger.warn(
          { subscription: this.name, dropped_in_burst: this.dropsInBurst, dropped: this.queue.dropped },
          `subscriber "${this.name}" caught up after dropping ${this.dropsInBurst} events`,
        );
        this.dropsInBurst = 0;
      },
    });
  }

  get queued(): number {
    return this.queue.size;
  }
  get dropped(): number {
    return this.queue.dropped;
  }
  get delivered(): number {
    return this.queue.delivered;
  }
  get handlerErrors(): number {
    return this.queue.failed;
  }
  get isActive(): boolean {
    return this.active;
  }

  /** Queues an event for the handler; false when it was dropped or the subscription has ended. */
  offer(event: BrokerEvent, topic: string): boolean {
    return this.queue.offer({ event, topic });
  }

  unsubscribe(): void {
    if (!this.active) return;
    this.active = false;
    this.queue.stop();
    this.detach();
  }

  /** See DeliveryQueue.whenIdle. */
  whenIdle(timeoutMs: number): Promise<boolean> {
    return this.queue.whenIdle(timeoutMs);
  }

  stats(): SubscriptionStats {
    return {
      name: this.name,
      pattern: this.pattern,
      queueDepth: this.queueDepth,
      queued: this.queued,
      dropped: this.dropped,
      delivered: this.delivered,
      handlerErrors: this.handlerErrors,
    };
  }
}
