/**
 * The router: an inbound channel message is matched once against the binding table and queued on
 * the session of (agent, channel, account, contact); each session runs one turn at a time, different
 * sessions run concurrently; the reply goes back through the channel. Nothing is dropped silently:
 * unbound, malformed and over-capacity messages are counted and logged.
 */
import { setMaxListeners } from "node:events";
import type { BrokerEvent } from "../../broker/types.js";
import type { TurnEndReason, TurnEvent } from "../../engine/events.js";
import type { AgentSession } from "../../engine/session.js";
import { SessionQueue } from "../../engine/sessions/queue.js";
import type { BindingTable } from "./bindings.js";
import { type InboundMessage, InboundMessageError, parseInboundEvent } from "./inbound.js";
import type { ReplySender } from "./outbound.js";

export interface SessionKey {
  agentId: string;
  /** `<kind>` or `<kind>.<instance>`. */
  channel: string;
  account: string | undefined;
  contact: string;
}

/** Opens (creates or resumes) the engine session for a key; the daemon backs it with the store. */
export interface SessionOpener {
  open(key: SessionKey): AgentSession;
}

/**
 * Operator takeover's say before a turn runs: true when the conversation is paused and the
 * message was handed to the hold instead (daemon/processing/control.ts); the agent stays silent.
 */
export interface TurnGate {
  holds(key: SessionKey, inbound: InboundMessage): boolean;
}

export interface RouterLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RouterStats {
  routed: number;
  unbound: number;
  malformed: number;
  queueFull: number;
  repliesSent: number;
  replyFailures: number;
  turnsFailed: number;
}

export interface RouterOptions {
  bindings: BindingTable;
  sessions: SessionOpener;
  replies: ReplySender;
  logger: RouterLogger;
  /** Queue capacity of an agent's sessions (agents.yaml `config.queue_cap`). */
  queueCap: (agentId: string) => number;
  /** Called after every turn, for metrics. */
  onTurn?: (agentId: string, reason: TurnEndReason, seconds: number) => void;
  /** Every event of every turn, for metrics (tool calls). */
  onEvent?: (agentId: string, event: TurnEvent) => void;
  onRouted?: (agentId: string) => void;
  onUnbound?: (channel: string) => void;
  /** Asked once before each turn. */
  gate?: TurnGate;
  /** At most this many session queues are kept; idle ones beyond it are forgotten (their sessions stay in the store). */
  maxQueues?: number;
}

interface Work {
  key: SessionKey;
  inbound: InboundMessage;
}

const keyString = (k: SessionKey) =>
  `${k.agentId}\u0000${k.channel}\u0000${k.account ?? ""}\u0000${k.contact}`;

/** Sent on the channel when a turn fails before the agent said anything (issue 14.2). */
export const FAILED_TURN_REPLY =
  "Sorry, I could not answer this message: something went wrong on my side. Please try again later.";

export class Router {
  private bindings: BindingTable;
  private readonly queues = new Map<string, SessionQueue<Work>>();
  private readonly controller = new AbortController();
  private readonly counters: RouterStats = {
    routed: 0,
    unbound: 0,
    malformed: 0,
    queueFull: 0,
    repliesSent: 0,
    replyFailures: 0,
    turnsFailed: 0,
  };

  constructor(private readonly options: RouterOptions) {
    this.bindings = options.bindings;
    // Every running turn listens on this one signal; hundreds at once are expected, not a leak.
    setMaxListeners(0, this.controller.signal);
  }

  /** Swaps the binding table (hot reload); messages already queued keep their agent. */
  setBindings(bindings: BindingTable): void {
    this.bindings = bindings;
  }

  /** Entry point for every `plugin.inbound.>` event. Never throws. */
  handle(topic: string, event: BrokerEvent): void {
    let inbound: InboundMessage;
    try {
      inbound = parseInboundEvent(topic, event);
    } catch (error) {
      if (!(error instanceof InboundMessageError)) throw error;
      this.counters.malformed++;
      this.options.logger.warn({ topic, err: error.message }, "inbound message dropped: malformed");
      return;
    }
    const agentId = this.bindings.match(inbound.kind, inbound.instance);
    if (agentId === undefined) {
      this.counters.unbound++;
      this.options.onUnbound?.(inbound.instance ? `${inbound.kind}.${inbound.instance}` : inbound.kind);
      this.options.logger.warn(
        { topic, kind: inbound.kind, instance: inbound.instance, contact: inbound.contact },
        "inbound message not routed: no agent is bound to this channel",
      );
      return;
    }
    const key: SessionKey = {
      agentId,
      channel: inbound.instance ? `${inbound.kind}.${inbound.instance}` : inbound.kind,
      account: inbound.account,
      contact: inbound.contact,
    };
    const queue = this.queueFor(key);
    if (!queue.offer({ key, inbound })) {
      this.counters.queueFull++;
      this.options.logger.warn(
        { agentId, channel: key.channel, contact: key.contact, depth: queue.depth },
        "inbound message refused: the session's queue is full",
      );
      return;
    }
    this.counters.routed++;
    this.options.onRouted?.(agentId);
  }

  stats(): RouterStats {
    return { ...this.counters };
  }

  /** Busy sessions, queued messages and the deepest queue, for metrics. */
  queueStats(): { sessions: number; queued: number; longest: number } {
    let sessions = 0;
    let queued = 0;
    let longest = 0;
    for (const q of this.queues.values()) {
      if (q.busy || q.depth > 0) sessions++;
      queued += q.depth;
      longest = Math.max(longest, q.depth);
    }
    return { sessions, queued, longest };
  }

  /**
   * Shutdown: waits up to `graceMs` for queued and running turns to finish, then cancels what is
   * still running and waits for those turns to end.
   */
  async drain(graceMs: number): Promise<void> {
    const all = Promise.all([...this.queues.values()].map((q) => q.idle()));
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref()),
    ]);
    if (timedOut) {
      this.options.logger.warn({ graceMs }, "turns still running at shutdown: cancelling them");
      this.controller.abort(new Error("daemon shutting down"));
      await all;
    }
  }

  private queueFor(key: SessionKey): SessionQueue<Work> {
    const id = keyString(key);
    let queue = this.queues.get(id);
    if (!queue) {
      this.forgetIdleQueues();
      queue = new SessionQueue<Work>(this.options.queueCap(key.agentId), (work) => this.run(work));
      this.queues.set(id, queue);
    }
    return queue;
  }

  private forgetIdleQueues(): void {
    const max = this.options.maxQueues ?? 10_000;
    if (this.queues.size < max) return;
    for (const [id, queue] of this.queues) {
      if (!queue.busy && queue.depth === 0) this.queues.delete(id);
      if (this.queues.size < max) return;
    }
  }

  private async run({ key, inbound }: Work): Promise<void> {
    const { logger } = this.options;
    const started = performance.now();
    let reason: TurnEndReason = "error";
    try {
      if (this.options.gate?.holds(key, inbound)) return;
      const session = this.options.sessions.open(key);
      let reply: string | undefined;
      const input = {
        content: [{ type: "text" as const, text: inbound.text }],
        origin: {
          channel: inbound.kind,
          senderId: inbound.senderId ?? inbound.contact,
          ...(inbound.messageId === undefined ? {} : { messageId: inbound.messageId }),
        },
      };
      for await (const event of session.runTurn(input, { signal: this.controller.signal })) {
        if (event.type === "lagged") continue;
        this.options.onEvent?.(key.agentId, event);
        if (event.type === "error") {
          logger.warn({ agentId: key.agentId, failure: event.failure, err: event.message }, "turn error");
        } else if (event.type === "turn_end") {
          reason = event.reason;
          reply = event.reply;
        }
      }
      this.options.onTurn?.(key.agentId, reason, (performance.now() - started) / 1000);
      if (reason === "error") {
        this.counters.turnsFailed++;
        // Silence reads as "ignored" to the person on the channel: tell them, without the details
        // (those are the operator's, in the log).
        if (!reply?.trim()) reply = FAILED_TURN_REPLY;
      }
      if (!reply?.trim()) return;
      try {
        await this.options.replies.send(
          { kind: inbound.kind, instance: inbound.instance, to: inbound.contact, sessionId: session.id },
          reply,
        );
        this.counters.repliesSent++;
      } catch (error) {
        this.counters.replyFailures++;
        logger.error(
          { agentId: key.agentId, channel: key.channel, to: inbound.contact, err: (error as Error).message },
          "reply could not be delivered",
        );
      }
    } catch (error) {
      this.counters.turnsFailed++;
      this.options.onTurn?.(key.agentId, "error", (performance.now() - started) / 1000);
      logger.error({ agentId: key.agentId, err: (error as Error).stack }, "routing a message failed");
    }
  }
}
