/**
 * The router: an inbound channel message is matched once against the binding table and queued on
 * the session of (agent, channel, account, contact); each session runs one turn at a time, different
 * sessions run concurrently; the reply goes back through the channel. Nothing is dropped silently:
 * unbound, malformed, duplicate and over-capacity messages are counted and logged.
 *
 * Durable inbox (issue 10.19): with an `inbox`, a routed message is written to SQLite before it is
 * acknowledged and before its turn starts; when its turn has ended its reply is kept in the row
 * before it is sent, and the row is marked done once the channel took the reply. The writes of one
 * tick share one transaction (the inbox's group commit): `handleAcked` answers once the message's
 * row is committed, and a turn waits for that commit before it starts. A failed send is retried a few times in this run, and what is still
 * unsent is sent again by `replay` at the next start, which also queues what an earlier run left
 * undone, in arrival order. A message whose dedup key the inbox already holds is a duplicate and
 * does not run a second turn.
 */
import { setMaxListeners } from "node:events";
import { monotonicMs } from "@nexo/wire";
import type { BrokerEvent } from "../../broker/types.js";
import type { InboundOutcome } from "../../channels/inbound-receipts.js";
import type { TurnEndReason, TurnEvent } from "../../engine/events.js";
import type { AgentSession } from "../../engine/session.js";
import { SessionQueue } from "../../engine/sessions/queue.js";
import { InboxFullError, type InboxRepository, type TranscriptRepository } from "../../store/index.js";
import { inboundImages } from "./attachments.js";
import type { BindingTable } from "./bindings.js";
import { channelCommandOf, commandReply } from "./commands.js";
import { type InboundMessage, InboundMessageError, inboundDedupKey, parseInboundEvent } from "./inbound.js";
import type { ReplySender, ReplyTarget } from "./outbound.js";

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
  /**
   * Opens the sessions of these keys ahead of their turns, so that the records of new contacts
   * are created in one transaction rather than one commit each; `open` then finds them. Best
   * effort: when it throws, nothing of it is kept and each turn's `open` does the work (and meets
   * the error) as it would have without it.
   */
  openMany?(keys: readonly SessionKey[]): void;
  /**
   * A promise to await before the first `open` (the engine's code loads with the first session),
   * `undefined` once nothing is left to wait for.
   */
  loading?(): Promise<void> | undefined;
  /**
   * Starts a fresh conversation for the key (a person's `/new`): later messages open a new
   * session; the earlier one stays in the store. Returns the new session's id.
   */
  renew(key: SessionKey): string;
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
  /** Messages the durable inbox already held (redeliveries): not run again. */
  duplicates: number;
  /** Messages refused because the durable inbox was at its bound. */
  inboxFull: number;
  /** Messages left undone by an earlier run and queued again at start. */
  replayed: number;
  repliesSent: number;
  /** Failed attempts to hand a reply to its channel (a retried reply counts once per attempt). */
  replyFailures: number;
  /** Replies still unsent after their last attempt in this run: the inbox keeps them for the next start. */
  repliesKept: number;
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
  /**
   * The state directories of the local plugins serving a channel kind: the only places the
   * pictures of its inbound messages are read from (./attachments.ts). Without it, none are.
   */
  attachmentRoots?: (kind: string) => readonly string[];
  /**
   * The durable inbox. Without it (unit tests of routing alone) messages live only in memory
   * between arrival and their turn.
   */
  inbox?: Pick<InboxRepository, "stageAccept" | "stageReply" | "stageDone" | "committed" | "undone">;
  /**
   * With an inbox: the waits before each new attempt to send a reply the channel refused (default
   * 1 s, 4 s, 15 s, 60 s). After the last one the reply stays in the inbox for the next start.
   */
  replyRetryDelaysMs?: readonly number[];
  /**
   * The transcripts, asked before a replayed message runs: a turn killed after it stored the
   * message must not store it again, and one that already answered must not answer again.
   */
  transcripts?: Pick<TranscriptRepository, "messageState">;
  /** At most this many session queues are kept; idle ones beyond it are forgotten (their sessions stay in the store). */
  maxQueues?: number;
}

interface Work {
  key: SessionKey;
  inbound: InboundMessage;
  /** The message's row in the durable inbox, when there is one. */
  inboxSeq?: number;
  /** The group commit that writes the row: the turn starts after it. */
  committed?: Promise<void>;
  /** Queued by `replay`: an earlier run may have begun its turn. */
  replayed?: boolean;
  /** Queued by `replay`: the earlier run's turn ended with this reply, which never reached the channel. */
  reply?: string;
}

const DEFAULT_REPLY_RETRY_DELAYS_MS = [1_000, 4_000, 15_000, 60_000] as const;

/** A reply on its way to the channel; `inboxSeq` when the inbox keeps it until it is sent. */
interface PendingReply {
  target: ReplyTarget;
  text: string;
  inboxSeq: number | undefined;
  agentId: string;
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
  /** Inbox rows queued or running in this run: a replay must not queue them a second time. */
  private readonly inboxLive = new Set<number>();
  /** Timers of replies waiting for their next attempt; a drain cancels them (the inbox keeps the replies). */
  private readonly replyRetries = new Map<NodeJS.Timeout, PendingReply>();
  /** Retried replies being sent right now: a drain waits for them. */
  private readonly replySends = new Set<Promise<void>>();
  private draining = false;
  /**
   * Sessions of messages staged for the inbox whose turns have not started: opened together by
   * the first turn that starts after their commit (`openAhead`).
   */
  private toOpen: SessionKey[] = [];
  /** The last group commit whose failure to mark messages done is logged (once per commit). */
  private watchedCommit: Promise<void> | undefined;
  private readonly counters: RouterStats = {
    routed: 0,
    unbound: 0,
    malformed: 0,
    queueFull: 0,
    duplicates: 0,
    inboxFull: 0,
    replayed: 0,
    repliesSent: 0,
    replyFailures: 0,
    repliesKept: 0,
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

  /**
   * Entry point for every `plugin.inbound.>` event. Never throws; says what became of the message.
   * A durable "queued" is the inbox row staged for this tick's group commit: an acknowledged
   * publish answers the plugin through `handleAcked`, which waits for that commit
   * (channels/inbound-receipts.ts).
   */
  handle(topic: string, event: BrokerEvent): InboundOutcome {
    return this.route(topic, event).outcome;
  }

  /**
   * `handle`, answered once the message is safe: a durable "queued" only after its inbox row is
   * committed (the tick's group commit), "queued, not durable" when that commit failed (the
   * message then runs from memory). What an acknowledged publish tells the channel plugin.
   */
  async handleAcked(topic: string, event: BrokerEvent): Promise<InboundOutcome> {
    const { outcome, committed } = this.route(topic, event);
    if (committed === undefined) return outcome;
    try {
      await committed;
      return outcome;
    } catch {
      return { status: "queued", durable: false };
    }
  }

  private route(topic: string, event: BrokerEvent): { outcome: InboundOutcome; committed?: Promise<void> } {
    let inbound: InboundMessage;
    try {
      inbound = parseInboundEvent(topic, event);
    } catch (error) {
      if (!(error instanceof InboundMessageError)) throw error;
      this.counters.malformed++;
      this.options.logger.warn({ topic, err: error.message }, "inbound message dropped: malformed");
      return { outcome: { status: "refused", reason: "invalid_message", detail: error.message } };
    }
    const key = this.keyOf(inbound, topic);
    if (key === undefined) {
      return {
        outcome: { status: "refused", reason: "not_routed", detail: `no agent is bound to ${topic}` },
      };
    }
    const queue = this.queueFor(key);
    if (queue.full) {
      this.counters.queueFull++;
      this.options.logger.warn(
        { agentId: key.agentId, channel: key.channel, contact: key.contact, depth: queue.depth },
        "inbound message refused: the session's queue is full",
      );
      return {
        outcome: {
          status: "refused",
          reason: "queue_full",
          detail: `this conversation already has ${queue.depth} messages waiting`,
        },
      };
    }
    const work: Work = { key, inbound };
    if (this.options.inbox) {
      const inboxSeq = this.persist(inbound, key);
      if (typeof inboxSeq === "object") return { outcome: inboxSeq };
      if (inboxSeq !== "not_persisted") {
        work.inboxSeq = inboxSeq;
        work.committed = this.options.inbox.committed();
        this.inboxLive.add(inboxSeq);
        // A command is answered without a turn (and `/new` makes its own session): not opened ahead.
        if (this.options.sessions.openMany !== undefined && channelCommandOf(inbound.text) === undefined)
          this.toOpen.push(key);
      }
    }
    queue.enqueue(work);
    this.counters.routed++;
    this.options.onRouted?.(key.agentId);
    return {
      outcome: { status: "queued", durable: work.inboxSeq !== undefined },
      ...(work.committed === undefined ? {} : { committed: work.committed }),
    };
  }

  /**
   * Queues every message the durable inbox holds undone (an earlier run was killed before their
   * turns ended), in arrival order, so each session keeps its FIFO. Call once, at start; a message
   * that arrived in this run before the call is already queued and is skipped. Returns how many
   * were queued.
   */
  replay(): number {
    const inbox = this.options.inbox;
    if (!inbox) return 0;
    let queued = 0;
    for (const row of inbox.undone()) {
      const { seq, receivedAtMs: _receivedAtMs, reply, ...message } = row;
      if (this.inboxLive.has(seq)) continue;
      const key = this.keyOf(message, "(inbox replay)");
      if (key === undefined) {
        // Nobody is bound to its channel any more: nothing could answer it, now or later.
        this.markDone(seq);
        continue;
      }
      this.inboxLive.add(seq);
      this.queueFor(key).enqueue({
        key,
        inbound: { ...message, eventId: `inbox:${seq}` },
        inboxSeq: seq,
        replayed: true,
        ...(reply === undefined ? {} : { reply }),
      });
      queued++;
    }
    this.counters.replayed += queued;
    if (queued > 0) this.options.logger.info({ messages: queued }, "inbox: replaying messages left undone");
    return queued;
  }

  /** The session a message belongs to; undefined (counted and logged) when no agent is bound. */
  private keyOf(inbound: Omit<InboundMessage, "eventId">, topic: string): SessionKey | undefined {
    const channel = inbound.instance ? `${inbound.kind}.${inbound.instance}` : inbound.kind;
    const agentId = this.bindings.match(inbound.kind, inbound.instance);
    if (agentId === undefined) {
      this.counters.unbound++;
      this.options.onUnbound?.(channel);
      this.options.logger.warn(
        { topic, kind: inbound.kind, instance: inbound.instance, contact: inbound.contact },
        "inbound message not routed: no agent is bound to this channel",
      );
      return undefined;
    }
    return { agentId, channel, account: inbound.account, contact: inbound.contact };
  }

  /**
   * Writes the message to the durable inbox: its row, the outcome when it must not be queued
   * (duplicate, inbox full; counted and logged), "not_persisted" when the write failed — then it
   * still runs from memory, as it would without an inbox, and the failure is logged.
   */
  private persist(inbound: InboundMessage, key: SessionKey): number | InboundOutcome | "not_persisted" {
    const inbox = this.options.inbox!;
    const where = { agentId: key.agentId, channel: key.channel, contact: key.contact };
    try {
      const result = inbox.stageAccept(inboundDedupKey(inbound), inbound);
      if (result.accepted) return result.seq;
      this.counters.duplicates++;
      this.options.logger.info(
        { ...where, messageId: inbound.messageId, duplicateOf: result.duplicateOf },
        "inbound message ignored: the inbox already holds it (redelivery)",
      );
      return { status: "duplicate" };
    } catch (error) {
      if (!(error instanceof InboxFullError)) {
        this.options.logger.error(
          { ...where, err: (error as Error).message },
          "inbox: the message could not be written; it runs from memory only",
        );
        return "not_persisted";
      }
      this.counters.inboxFull++;
      this.options.logger.warn(
        { ...where, maxPending: error.maxPending },
        `inbound message refused: ${error.message}`,
      );
      return { status: "refused", reason: "inbox_full", detail: error.message };
    }
  }

  /**
   * Hands a reply to its channel, kept with its message until the channel took it (retried, then
   * sent at the next start); when it cannot be kept, the message is done once this first send ends.
   */
  private async reply(
    target: ReplyTarget,
    text: string,
    inboxSeq: number | undefined,
    agentId: string,
  ): Promise<void> {
    const kept = await this.keepReply(inboxSeq, text);
    await this.deliver({ target, text, inboxSeq: kept ? inboxSeq : undefined, agentId }, 0);
    if (!kept) this.markDone(inboxSeq);
  }

  /**
   * Keeps a turn's reply with its message until the channel took it: resolves once it is committed
   * (the replies of turns that end in the same tick share the commit); false when that failed.
   */
  private async keepReply(inboxSeq: number | undefined, reply: string): Promise<boolean> {
    const inbox = this.options.inbox;
    if (inboxSeq === undefined || inbox === undefined) return false;
    try {
      inbox.stageReply(inboxSeq, reply);
      await inbox.committed();
      return true;
    } catch (error) {
      this.options.logger.error(
        { inboxSeq, err: (error as Error).message },
        "inbox: keeping a reply failed; it is sent once, without a retry at the next start",
      );
      return false;
    }
  }

  /**
   * Marks a message done with the tick's group commit; nothing waits for it (a kill before the
   * commit only means the reply is sent once more at the next start).
   */
  private markDone(inboxSeq: number | undefined): void {
    const inbox = this.options.inbox;
    if (inboxSeq === undefined || inbox === undefined) return;
    try {
      inbox.stageDone(inboxSeq);
    } catch (error) {
      this.logDoneFailure(error);
      return;
    }
    const commit = inbox.committed();
    if (commit === this.watchedCommit) return;
    this.watchedCommit = commit;
    commit.catch((error: unknown) => this.logDoneFailure(error));
  }

  private logDoneFailure(error: unknown): void {
    // The turn is over either way; a row left undone is replayed once more at the next start.
    this.options.logger.error({ err: (error as Error).message }, "inbox: marking messages done failed");
  }

  /** How far an earlier run got with a replayed message (by its channel message id, when it has one). */
  private storedState(sessionId: string, inbound: InboundMessage): "absent" | "unanswered" | "answered" {
    const transcripts = this.options.transcripts;
    if (transcripts === undefined || inbound.messageId === undefined) return "absent";
    try {
      return transcripts.messageState(sessionId, inbound.messageId);
    } catch (error) {
      this.options.logger.error(
        { sessionId, err: (error as Error).message },
        "inbox: could not read the transcript before a replay; the message runs as new",
      );
      return "absent";
    }
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
    // Replies waiting for a retry are not retried any more in this run: the inbox keeps them.
    this.draining = true;
    for (const [timer, reply] of this.replyRetries) {
      clearTimeout(timer);
      if (reply.inboxSeq !== undefined) this.counters.repliesKept++;
    }
    this.replyRetries.clear();
    const all = Promise.all([...this.queues.values()].map((q) => q.idle()).concat([...this.replySends]));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), graceMs);
      }),
    ]);
    // Cleared rather than unref'd: a drain that ended early must not leave the grace timer (and
    // what it holds) pending for the rest of the grace.
    clearTimeout(timer);
    if (timedOut) {
      this.options.logger.warn({ graceMs }, "turns still running at shutdown: cancelling them");
      this.controller.abort(new Error("daemon shutting down"));
      await all;
    }
    // The last done marks are staged: committed before the store may close (a failure is logged).
    await this.options.inbox?.committed().catch(() => {});
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

  private async run(work: Work): Promise<void> {
    try {
      if (work.committed !== undefined) await this.rowWritten(work);
      // The first turn waits for the engine's session code to load (daemon/sessions.ts); should
      // the load fail, its `open` below throws, and the turn fails as any turn that threw.
      const loading = this.options.sessions.loading?.();
      if (loading !== undefined) await loading.catch(() => undefined);
      if (work.committed !== undefined) this.openAhead();
      await this.runTurn(work);
    } finally {
      if (work.inboxSeq !== undefined) this.inboxLive.delete(work.inboxSeq);
    }
  }

  /**
   * Waits for the group commit of the message's inbox row: a turn that stored its transcript
   * before the row existed could, after a kill, run again for the channel's redelivery. When the
   * commit failed, the message runs from memory, as it would without an inbox.
   */
  private async rowWritten(work: Work): Promise<void> {
    try {
      await work.committed;
    } catch (error) {
      this.options.logger.error(
        { agentId: work.key.agentId, channel: work.key.channel, err: (error as Error).message },
        "inbox: the message could not be written; it runs from memory only",
      );
      if (work.inboxSeq !== undefined) this.inboxLive.delete(work.inboxSeq);
      work.inboxSeq = undefined;
    }
  }

  /**
   * The messages of a group commit start their turns one after another in the same tick; the
   * first opens the sessions of all of them (and of any staged since), so that a burst of new
   * contacts creates its session records in one transaction instead of one commit each. A
   * failure is logged and changes nothing: each turn opens its own session as before.
   */
  private openAhead(): void {
    if (this.toOpen.length === 0) return;
    const keys = this.toOpen;
    this.toOpen = [];
    if (keys.length < 2) return;
    try {
      this.options.sessions.openMany?.(keys);
    } catch (error) {
      this.options.logger.warn(
        { sessions: keys.length, err: (error as Error).message },
        "opening sessions ahead of their turns failed; each turn opens its own",
      );
    }
  }

  private async runTurn({ key, inbound, inboxSeq, replayed, reply: keptReply }: Work): Promise<void> {
    const { logger } = this.options;
    const started = monotonicMs();
    let reason: TurnEndReason = "error";
    const target = (sessionId: string) => ({
      kind: inbound.kind,
      instance: inbound.instance,
      to: inbound.contact,
      sessionId,
    });
    try {
      if (keptReply !== undefined) {
        // An earlier run's turn answered it and kept the reply, which never reached the channel:
        // sent now, and no turn runs again.
        const session = this.options.sessions.open(key);
        logger.info(
          { agentId: key.agentId, inboxSeq },
          "inbox: sending a reply an earlier run could not deliver",
        );
        await this.deliver(
          { target: target(session.id), text: keptReply, inboxSeq, agentId: key.agentId },
          0,
        );
        return;
      }
      if (this.options.gate?.holds(key, inbound)) {
        // The paused conversation's store now keeps it: handled as far as the inbox is concerned.
        this.markDone(inboxSeq);
        return;
      }
      const command = channelCommandOf(inbound.text);
      if (command !== undefined) {
        // Answered by the daemon, in the conversation's turn order; no turn runs. A replayed
        // `/new` whose earlier run was killed only starts one more (empty) conversation.
        const sessionId =
          command === "new" ? this.options.sessions.renew(key) : this.options.sessions.open(key).id;
        logger.info({ agentId: key.agentId, channel: key.channel, command }, "channel command");
        await this.reply(target(sessionId), commandReply(command), inboxSeq, key.agentId);
        return;
      }
      const session = this.options.sessions.open(key);
      const stored = replayed ? this.storedState(session.id, inbound) : "absent";
      if (stored === "answered") {
        // The killed run answered it but died before keeping the reply (or it had none): handled,
        // not answered twice.
        logger.info({ agentId: key.agentId, inboxSeq }, "inbox: replayed message was already answered");
        this.markDone(inboxSeq);
        return;
      }
      let reply: string | undefined;
      const images =
        stored === "unanswered" || inbound.attachments.length === 0
          ? []
          : await inboundImages(
              inbound.attachments,
              this.options.attachmentRoots?.(inbound.kind) ?? [],
              (problem) =>
                logger.warn(
                  { agentId: key.agentId, channel: key.channel, ...problem },
                  "inbound picture not shown to the model",
                ),
            );
      const input = {
        alreadyStored: stored === "unanswered",
        // The inbox keeps the message until it is answered (a kill before the transcript has it
        // replays it), so the turn need not write it alone before asking the model: it goes with
        // the turn's first group of writes (engine/turn.ts).
        durable: inboxSeq !== undefined,
        content: [{ type: "text" as const, text: inbound.text }, ...images],
        origin: {
          channel: inbound.kind,
          senderId: inbound.senderId ?? inbound.contact,
          ...(inbound.messageId === undefined ? {} : { messageId: inbound.messageId }),
        },
      };
      // Looked up at the turn's first piece, not at each: its id is the turn's.
      let pieces: ((text: string) => void) | undefined | null = null;
      for await (const event of session.runTurn(input, { signal: this.controller.signal })) {
        if (event.type === "lagged") continue;
        this.options.onEvent?.(key.agentId, event);
        if (event.type === "text_delta") {
          // A preview for channels that show replies growing; the whole reply is still sent below.
          if (pieces === null) pieces = this.options.replies.pieces(target(session.id), event.turnId);
          pieces?.(event.text);
        } else if (event.type === "error") {
          logger.warn({ agentId: key.agentId, failure: event.failure, err: event.message }, "turn error");
        } else if (event.type === "turn_end") {
          reason = event.reason;
          reply = event.reply;
        }
      }
      this.options.onTurn?.(key.agentId, reason, (monotonicMs() - started) / 1000);
      if (
        this.controller.signal.aborted &&
        (reason === "cancelled" || reason === "error") &&
        inboxSeq !== undefined
      ) {
        // Cut short by the shutdown: left undone, the next start replays it and answers then.
        logger.info(
          { agentId: key.agentId, inboxSeq },
          "turn cut short by the shutdown: the inbox keeps its message",
        );
        return;
      }
      if (reason === "error") {
        this.counters.turnsFailed++;
        // Silence reads as "ignored" to the person on the channel: tell them, without the details
        // (those are the operator's, in the log).
        if (!reply?.trim()) reply = FAILED_TURN_REPLY;
      }
      if (!reply?.trim()) {
        this.markDone(inboxSeq);
        return;
      }
      // The turn has ended and its transcript is committed. The message is done only once the
      // channel took the reply: until then the inbox keeps the reply, so a failed send is retried
      // (here, then at the next start) rather than lost. A kill after the channel took it and
      // before the row is marked sends it once more at the next start.
      await this.reply(target(session.id), reply, inboxSeq, key.agentId);
    } catch (error) {
      // A turn that threw would throw again on replay: handled (and logged) once.
      if (!this.controller.signal.aborted) this.markDone(inboxSeq);
      this.counters.turnsFailed++;
      this.options.onTurn?.(key.agentId, "error", (monotonicMs() - started) / 1000);
      logger.error({ agentId: key.agentId, err: (error as Error).stack }, "routing a message failed");
    }
  }

  /**
   * One attempt to hand a reply to its channel. Sent: its inbox row is done. Refused: the next
   * attempt is scheduled (out of the session's queue, so the conversation goes on), or, after the
   * last one or once the router drains, the inbox keeps the reply for the next start.
   */
  private async deliver(reply: PendingReply, attempt: number): Promise<void> {
    try {
      await this.options.replies.send(reply.target, reply.text);
      this.counters.repliesSent++;
      this.markDone(reply.inboxSeq);
    } catch (error) {
      this.counters.replyFailures++;
      const delays = this.options.replyRetryDelaysMs ?? DEFAULT_REPLY_RETRY_DELAYS_MS;
      const retryIn = this.draining ? undefined : delays[attempt];
      const kept = reply.inboxSeq !== undefined;
      if (retryIn === undefined && kept) this.counters.repliesKept++;
      this.options.logger.error(
        {
          agentId: reply.agentId,
          channel: reply.target.kind,
          to: reply.target.to,
          attempt: attempt + 1,
          err: (error as Error).message,
          next:
            retryIn !== undefined ? `retry in ${retryIn} ms` : kept ? "sent again at the next start" : "none",
        },
        "reply could not be delivered",
      );
      if (retryIn === undefined) return;
      const timer = setTimeout(() => {
        this.replyRetries.delete(timer);
        const sending: Promise<void> = this.deliver(reply, attempt + 1).finally(() =>
          this.replySends.delete(sending),
        );
        this.replySends.add(sending);
      }, retryIn);
      // Never what keeps a process alive: a drain clears it, and the inbox keeps the reply.
      timer.unref();
      this.replyRetries.set(timer, reply);
    }
  }
}
