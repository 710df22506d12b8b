/**
 * The broker bridge of one plugin (plugin contract §5.1, §5.4, §6, §8).
 *
 * Outbound: for every channel kind K the plugin registers, the bridge subscribes
 * `plugin.outbound.K` and `plugin.outbound.K.>` and forwards each event as a `broker.event`
 * notification. The broker's handler only offers the event to a per-plugin queue of depth 64:
 * when the plugin reads too slowly the queue fills and new events are dropped and counted, so a
 * stalled plugin never blocks the broker or any other subscriber. Only `broker.event` goes
 * through this queue; replies and stream deltas are written by the peer directly and never
 * dropped.
 *
 * Inbound: `broker.publish` from the child is THE one choke point of the topic allowlist. Both
 * the topic it publishes on and the event's own `topic` must match `plugin.inbound.K` or
 * `plugin.inbound.K.>`; anything else is dropped with a warning and counted. The host fills `id`
 * (UUID v7), `timestamp` and `session_id` when the child leaves them out (the SDKs never send them).
 *
 * Acknowledged publish (`broker.publish_acked`, nexo's extension, with `receipts`): the same path,
 * but a request. Its answer waits for the router's receipt for the event (channels/
 * inbound-receipts.ts) — `{event_id, durable, duplicate}` once the message is in the durable
 * inbox, or a typed error naming why it was not taken (allowlist, invalid, unbound, full, no
 * acknowledgement in time). A plugin that answers its own sender only after this reply never
 * acknowledges a message a SIGKILL of the daemon can lose.
 */
import {
  ConnectionClosedError,
  Dispatcher,
  InvalidParamsError,
  type JsonRpcPeer,
  PluginHostCode,
  RpcError,
} from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import { BrokerError } from "../../broker/errors.js";
import { createEvent } from "../../broker/event.js";
import { DeliveryQueue } from "../../broker/queue.js";
import { topicMatches } from "../../broker/topic.js";
import type { Broker, BrokerEvent, Subscription } from "../../broker/types.js";
import type { InboundOutcome, InboundReceipts } from "../../channels/inbound-receipts.js";
import type { SupervisorLogger } from "../supervisor.js";
import type { PluginHost } from "./host.js";

/** §8: the depth of the per-plugin `broker.event` queue. */
export const BROKER_EVENT_QUEUE_DEPTH = 64;

/** The subscriptions that feed `broker.event` for these kinds (§6). */
export function outboundPatterns(kinds: readonly string[]): string[] {
  return kinds.flatMap((kind) => [`plugin.outbound.${kind}`, `plugin.outbound.${kind}.>`]);
}

/** The topics a plugin with these kinds may publish on (§6). */
export function inboundPatterns(kinds: readonly string[]): string[] {
  return kinds.flatMap((kind) => [`plugin.inbound.${kind}`, `plugin.inbound.${kind}.>`]);
}

export interface BridgeStats {
  /** `broker.event` notifications written to the child. */
  delivered: number;
  /** Events dropped because the plugin's queue was full (§8). */
  dropped: number;
  /** Events that could not be written: no running child, or its pipe closed mid-write. */
  undelivered: number;
  /** Events waiting in the queue now. */
  queued: number;
  /** `broker.publish` calls that reached the broker. */
  published: number;
  /** `broker.publish` calls dropped by the allowlist. */
  rejected: number;
  /** `broker.publish` calls dropped because they were not a usable event. */
  invalid: number;
}

export interface BrokerBridgeOptions {
  host: Pick<PluginHost, "id" | "attach" | "session">;
  broker: Broker;
  /** The plugin's channel kinds (the manifest's `channelKinds`). */
  kinds: readonly string[];
  logger: SupervisorLogger;
  /** Default 64 (§8); tests may use another. */
  queueDepth?: number;
  /** Serves `broker.publish_acked` (acknowledged publish) when given. */
  receipts?: InboundReceipts;
  /** How long an acknowledged publish waits for the router's receipt. Default 10 s. */
  receiptTimeoutMs?: number;
}

/** Seconds a plugin is told to wait before retrying a refusal that may pass later. */
const RETRY_AFTER_SECS = 1;

interface Outbound {
  topic: string;
  event: BrokerEvent;
}

export class BrokerBridge {
  private readonly options: BrokerBridgeOptions;
  private readonly allowlist: string[];
  private subscriptions: Subscription[] = [];
  private queue: DeliveryQueue<Outbound> | undefined;
  private detach: (() => void) | undefined;
  private counts = { delivered: 0, dropped: 0, undelivered: 0, published: 0, rejected: 0, invalid: 0 };

  constructor(options: BrokerBridgeOptions) {
    this.options = options;
    this.allowlist = inboundPatterns(options.kinds);
  }

  get pluginId(): string {
    return this.options.host.id;
  }

  /** Whether the plugin may publish on `topic` (the allowlist of §6). */
  allows(topic: string): boolean {
    return this.allowlist.some((pattern) => topicMatches(pattern, topic));
  }

  /** Subscribes the outbound topics and starts serving `broker.publish`. Idempotent. */
  start(): void {
    if (this.queue !== undefined) return;
    const { host, broker, kinds } = this.options;
    const queue = new DeliveryQueue<Outbound>({
      depth: this.options.queueDepth ?? BROKER_EVENT_QUEUE_DEPTH,
      deliver: (item) => this.deliver(item),
      onDeliveryError: (error, item) => {
        this.counts.undelivered += 1;
        if (!(error instanceof ConnectionClosedError)) {
          this.options.logger.warn(
            { plugin: this.pluginId, topic: item.topic, err: (error as Error).message },
            "broker.event not delivered",
          );
        }
      },
      onDrop: (item, dropped) => {
        this.counts.dropped += 1;
        // One line per power of two keeps a flood visible without flooding the log in turn.
        if ((dropped & (dropped - 1)) === 0) {
          this.options.logger.warn(
            { plugin: this.pluginId, topic: item.topic, dropped },
            "plugin is not keeping up; broker.event dropped (queue full)",
          );
        }
      },
    });
    this.queue = queue;
    this.subscriptions = outboundPatterns(kinds).map((pattern) =>
      broker.subscribe(pattern, (event, topic) => void queue.offer({ topic, event }), {
        name: `plugin:${this.pluginId}`,
      }),
    );
    this.detach = host.attach((peer) => this.serve(peer));
  }

  /** Unsubscribes, discards queued events and stops serving `broker.publish`. Idempotent. */
  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    this.queue?.stop();
    this.queue = undefined;
    this.detach?.();
    this.detach = undefined;
  }

  stats(): BridgeStats {
    return { ...this.counts, queued: this.queue?.size ?? 0 };
  }

  private async deliver(item: Outbound): Promise<void> {
    const session = this.options.host.session;
    if (session === undefined) {
      this.counts.undelivered += 1;
      return;
    }
    // Resolves once the pipe took the frame: while the child does not read, the queue waits here.
    await session.peer.notify("broker.event", { topic: item.topic, event: item.event });
    this.counts.delivered += 1;
  }

  private serve(peer: JsonRpcPeer): void {
    // Params that are not a broker event are dropped and logged by the peer (a request is answered
    // -32602); counted here.
    const dispatcher = new Dispatcher(
      peer,
      { requests: plugin.pluginChildMethods, notifications: plugin.pluginNotifications },
      {
        onSchemaFailure: () => {
          this.counts.invalid += 1;
        },
      },
    );
    dispatcher.on("broker.publish", (params) => void this.publish(params, undefined));
    const receipts = this.options.receipts;
    if (receipts !== undefined) {
      dispatcher.handle("broker.publish_acked", (params) => this.publishAcked(params, receipts));
    }
  }

  private async publishAcked(
    params: plugin.BrokerPublishAckedParams,
    receipts: InboundReceipts,
  ): Promise<plugin.BrokerPublishAckedResult> {
    const published = this.publish(params, receipts);
    if (published.refused !== undefined) throw published.refused;
    const outcome = await published.receipt!;
    return acknowledgement(published.eventId!, outcome);
  }

  /**
   * The one path of both publishes: the allowlist, the event completed, the broker. With
   * `receipts`, the wait for the router's receipt is registered before the broker can deliver.
   */
  private publish(
    { topic, event }: plugin.BrokerPublishParams,
    receipts: InboundReceipts | undefined,
  ): { refused?: RpcError; eventId?: string; receipt?: Promise<InboundOutcome> } {
    // The handler stays installed on the current peer after stop(); a stopped bridge forwards nothing.
    if (this.queue === undefined) {
      return { refused: notAcknowledged("the plugin's broker bridge is stopped") };
    }
    const { logger, broker } = this.options;
    if (!this.allows(topic) || !this.allows(event.topic)) {
      this.counts.rejected += 1;
      logger.warn(
        { plugin: this.pluginId, topic, eventTopic: event.topic, allowed: this.allowlist },
        "broker.publish dropped: topic outside the plugin's allowlist",
      );
      return {
        refused: new RpcError(
          PluginHostCode.publishTopicNotAllowed,
          `topic not allowed: this plugin may publish on ${this.allowlist.join(", ")}`,
          { reason: "topic_not_allowed" } satisfies plugin.PublishRefusedData,
        ),
      };
    }
    const { payload, ...rest } = event;
    const complete = createEvent({
      ...rest,
      session_id: event.session_id ?? null,
      payload: payload as Record<string, unknown>,
    });
    const receipt = receipts?.wait(complete.id, this.options.receiptTimeoutMs);
    try {
      broker.publish(topic, complete);
      this.counts.published += 1;
    } catch (error) {
      const refused = this.droppedByBroker(topic, error);
      // Nothing will deliver it: end the wait now rather than at its timeout.
      receipts?.settle(complete.id, { status: "unacknowledged", detail: refused.message });
      return { refused };
    }
    return { eventId: complete.id, ...(receipt === undefined ? {} : { receipt }) };
  }

  private droppedByBroker(topic: string, error: unknown): RpcError {
    if (!(error instanceof BrokerError)) throw error;
    this.counts.invalid += 1;
    this.options.logger.warn(
      { plugin: this.pluginId, topic, err: error.message },
      "broker.publish dropped by the broker",
    );
    return error.code === "unavailable" || error.code === "closed"
      ? notAcknowledged(`the broker cannot carry it: ${error.message}`)
      : new InvalidParamsError(`not a usable broker event: ${error.message}`, {
          reason: "invalid_message",
        } satisfies plugin.PublishRefusedData);
  }
}

function notAcknowledged(detail: string): RpcError {
  return new RpcError(PluginHostCode.publishNotAcknowledged, `not acknowledged: ${detail}`, {
    reason: "not_acknowledged",
    retry_after_secs: RETRY_AFTER_SECS,
  } satisfies plugin.PublishRefusedData);
}

/** The reply to `broker.publish_acked` for the router's outcome: a result, or the typed error. */
export function acknowledgement(eventId: string, outcome: InboundOutcome): plugin.BrokerPublishAckedResult {
  switch (outcome.status) {
    case "queued":
      return { event_id: eventId, durable: outcome.durable, duplicate: false };
    case "duplicate":
      return { event_id: eventId, durable: true, duplicate: true };
    case "unacknowledged":
      throw notAcknowledged(outcome.detail);
    case "refused":
      throw refusal(outcome.reason, outcome.detail);
  }
}

function refusal(reason: (InboundOutcome & { status: "refused" })["reason"], detail: string): RpcError {
  switch (reason) {
    case "invalid_message":
      return new InvalidParamsError(`not an inbound message: ${detail}`, { reason });
    case "not_routed":
      return new RpcError(PluginHostCode.publishNotRouted, `not routed: ${detail}`, { reason });
    case "queue_full":
      return new RpcError(PluginHostCode.overloaded, `overloaded: ${detail}; retry later`, {
        reason,
        retry_after_secs: RETRY_AFTER_SECS,
      });
    case "inbox_full":
      return new RpcError(PluginHostCode.inboxFull, detail, { reason, retry_after_secs: RETRY_AFTER_SECS });
  }
}
