/**
 * The in-process broker, the default for one machine. Delivery is at most once: an event reaches
 * each matching subscription's queue or is dropped there (and counted) when that queue is full.
 *
 * Publishing scans every subscription with `topicMatches`. A daemon holds tens of subscriptions
 * (one or two per plugin kind, a few for the router), where a scan beats maintaining a trie.
 */
import { createLogger } from "../log.js";
import { type BrokerCommonOptions, BrokerCore, checkDrainTimeout } from "./core.js";
import type { BrokerError } from "./errors.js";
import { topicMatches } from "./topic.js";
import type {
  Broker,
  BrokerEvent,
  BrokerHandler,
  BrokerReadiness,
  BrokerStats,
  SubscribeOptions,
  Subscription,
  Unlisten,
} from "./types.js";

export type LocalBrokerOptions = Partial<BrokerCommonOptions>;

export class LocalBroker implements Broker {
  readonly kind = "local" as const;
  private readonly core: BrokerCore;
  private closed: Promise<void> | undefined;

  constructor(options: LocalBrokerOptions = {}) {
    this.core = new BrokerCore("local", {
      ...options,
      logger: options.logger ?? createLogger({ base: { component: "broker" } }),
    });
  }

  publish(topic: string, event: BrokerEvent): void {
    const encoded = this.core.preparePublish(topic, event);
    this.core.countPublished();
    for (const subscription of this.core.subscriptions) {
      if (topicMatches(subscription.pattern, topic)) subscription.offer(encoded.event, topic);
    }
  }

  subscribe(pattern: string, handler: BrokerHandler, options?: SubscribeOptions): Subscription {
    return this.core.addSubscription(pattern, handler, options, () => ({
      ready: Promise.resolve(),
      // The core's own registry is the local routing table; nothing else to release.
      detach: () => {},
    }));
  }

  stats(): BrokerStats {
    return this.core.stats(this.readiness());
  }

  readiness(): BrokerReadiness {
    if (this.core.isClosing) return { ready: false, state: "closed", detail: "the local broker is closed" };
    return { ready: true, state: "connected", detail: "in-process" };
  }

  onStatus(listener: (readiness: BrokerReadiness) => void): Unlisten {
    return this.core.onStatus(listener);
  }

  onError(listener: (error: BrokerError) => void): Unlisten {
    return this.core.onError(listener);
  }

  close(options: { drainTimeoutMs?: number } = {}): Promise<void> {
    if (this.closed === undefined) {
      const timeoutMs = checkDrainTimeout(options.drainTimeoutMs);
      this.core.beginClose();
      this.core.emitStatus(this.readiness());
      this.closed = this.core.drainSubscriptions(timeoutMs);
    }
    return this.closed;
  }
}
