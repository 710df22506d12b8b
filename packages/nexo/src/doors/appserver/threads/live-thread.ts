/**
 * A thread loaded to run turns: its engine session, the connections watching it, the turn running
 * now and the inputs queued behind it.
 *
 * Delivery (the notes' pitfalls): a thread-scoped notification goes to the connection that started
 * the turn and to every connection subscribed to the thread — each once, whatever the overlap —
 * and never elsewhere. The `turn/start` response goes out before `turn/started`, which comes before
 * any item or approval request; `turn/completed` (or failed/cancelled) is the turn's last event.
 *
 * Turns are owned by the server: the engine's event stream is drained here as fast as it comes,
 * whoever reads slowly (each connection's outbox bounds what it holds), and a client leaving
 * neither stalls nor cancels a turn.
 */
import type {
  ApprovalDecision,
  AppServerNotificationName,
  AppServerNotificationParams,
  InputPart,
  Item,
  QueuedTurnInput,
  SenderContext,
  ThreadConfiguration,
  ThreadRuntime,
  Turn,
} from "@nexo/wire/schemas/appserver";
import type { TurnEvent } from "../../../engine/events.js";
import type { AgentSession } from "../../../engine/session.js";
import type { HubEvent } from "../../../engine/thread-hub.js";
import type { ChatMessage, ContentBlock } from "../../../engine/types.js";
import { isoTime } from "../../../iso-time.js";
import type { Logger } from "../../../log.js";
import type { AppServerConnection } from "../connection.js";
import { appServerErrors } from "../errors.js";
import {
  applyDecision,
  approvalTypeOf,
  describeRequest,
  fallbackDecision,
  PendingApproval,
  scopeKeyOf,
} from "./approvals.js";
import { turnId } from "./history.js";
import { displayText } from "./input.js";
import { type Emit, TurnProjector } from "./projection.js";
import type { TurnOutcome } from "./records.js";
import { SubAgentProgressTracker } from "./subagent-progress.js";

type DeliveryMode = "normal" | "queued" | "guidance";

export interface LiveThreadOptions {
  id: string;
  session: AgentSession;
  workspace: string;
  /** The connections subscribed to the thread (kept by the service, so they outlive a reload). */
  subscribers: () => ReadonlySet<AppServerConnection>;
  /** Turns the thread already has (its next turn is `turn_<count + 1>`). */
  turnCount: number;
  logger: Logger;
  approvalTimeoutMs: number;
  configuration: () => ThreadConfiguration | undefined;
  /** What the model receives for these parts. */
  materialize: (parts: readonly InputPart[]) => Promise<ContentBlock[]>;
  /** The runtime flags changed: broadcast them. */
  onRuntimeChanged: (runtime: ThreadRuntime) => void;
  /** A turn ended other than completed: remember it with the thread. */
  onOutcome: (turnId: string, outcome: TurnOutcome) => void;
  /** A sub-agent of the running turn got a child thread; `send` reaches the turn's audience. */
  onSubAgent?: (event: Extract<TurnEvent, { type: "subagent_started" }>, send: Emit) => void;
}

interface RunningTurn {
  projector: TurnProjector;
  starter: AppServerConnection | undefined;
  /** Who sent the turn's input (a channel adapter's user), when the client said. */
  sender: SenderContext | undefined;
  approvals: Map<string, PendingApproval>;
  /** Set when the turn must end as failed whatever the engine reports (an approval timed out). */
  failure?: { error: string; code: number };
  cancelReason?: string;
  /** Where the turn's sub-agents stand (`subagent/progress`), once one has started. */
  progress?: SubAgentProgressTracker;
  done: Promise<void>;
}

const now = (): string => isoTime();

export class LiveThread {
  readonly id: string;
  readonly session: AgentSession;
  private current: RunningTurn | undefined;
  private queued: QueuedTurnInput[] = [];
  private turnCount: number;
  /** Set while the server shuts down: approvals are decided by policy, nothing new starts. */
  private draining = false;

  constructor(private readonly options: LiveThreadOptions) {
    this.id = options.id;
    this.session = options.session;
    this.turnCount = options.turnCount;
  }

  get running(): RunningTurn | undefined {
    return this.current;
  }

  get queuedInputs(): QueuedTurnInput[] {
    return this.queued;
  }

  get runtime(): ThreadRuntime {
    return {
      running: this.current !== undefined,
      waitingOnApproval: (this.current?.approvals.size ?? 0) > 0,
      waitingOnPlanConfirmation: false,
    };
  }

  /** The running turn's id and who sent its input; undefined when no turn runs. */
  turnContext(): { turnId: string; sender: SenderContext | undefined } | undefined {
    const running = this.current;
    return running === undefined ? undefined : { turnId: running.projector.turn.id, sender: running.sender };
  }

  /** The running turn as a client sees it now (all items so far). */
  runningTurn(): Turn | undefined {
    return this.current?.projector.turn;
  }

  // --- audience -----------------------------------------------------------------------------------

  /** Asks `connection` about every call waiting for consent (it has just subscribed). */
  offerPendingApprovals(connection: AppServerConnection): void {
    for (const pending of this.current?.approvals.values() ?? []) pending.ask(connection);
  }

  /** Reloads the history after the transcript was cut (a rollback); no turn may be running. */
  reset(history: ChatMessage[], turnCount: number): void {
    this.session.replaceHistory(history);
    this.turnCount = turnCount;
  }

  /** Every connection a thread-scoped event of the running turn goes to, each once. */
  private audience(): ReadonlySet<AppServerConnection> {
    const subscribers = this.options.subscribers();
    const starter = this.current?.starter;
    if (starter === undefined || starter.phase === "closed" || subscribers.has(starter)) return subscribers;
    return new Set([...subscribers, starter]);
  }

  /**
   * Sends a thread-scoped notification to the audience. The same connections as `audience()`, without
   * building a set per event: this runs once per streamed delta.
   */
  readonly send: Emit = <M extends AppServerNotificationName>(
    method: M,
    params: AppServerNotificationParams<M>,
  ) => {
    const subscribers = this.options.subscribers();
    for (const connection of subscribers) connection.notify(method, params);
    const starter = this.current?.starter;
    if (starter !== undefined && starter.phase !== "closed" && !subscribers.has(starter)) {
      starter.notify(method, params);
    }
  };

  // --- turns -------------------------------------------------------------------------------------

  /**
   * Starts a turn and returns it as the `turn/start` response shows it. Its events are held until
   * `release()` — call it once the response is on its way — so the response comes first.
   */
  async start(
    parts: readonly InputPart[],
    options: { starter?: AppServerConnection; sender?: SenderContext; deliveryMode?: DeliveryMode } = {},
  ): Promise<{ turn: Turn; release: () => void }> {
    this.refuseIfBusy();
    const content = await this.options.materialize(parts);
    this.refuseIfBusy();
    const id = turnId(++this.turnCount);
    const startedAt = now();
    const projector = new TurnProjector(
      { id, threadId: this.id, status: "running", startedAt, items: [] },
      this.options.workspace,
      this.send,
    );
    let stream: AsyncIterable<HubEvent>;
    try {
      stream = this.session.runTurn(content);
    } catch (error) {
      this.turnCount--;
      throw error;
    }
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running: RunningTurn = {
      projector,
      starter: options.starter,
      sender: options.sender,
      approvals: new Map(),
      done: Promise.resolve(),
    };
    this.current = running;
    const text = displayText(parts);
    const sender = options.sender;
    running.done = released.then(() =>
      this.pump(running, stream, {
        type: "userMessage",
        payload: {
          text,
          nativeInputParts: [...parts],
          materializedInputParts: [{ type: "text", text }],
          deliveryMode: options.deliveryMode ?? "normal",
          ...(sender
            ? {
                senderId: sender.senderId,
                ...(sender.senderName ? { senderName: sender.senderName } : {}),
                ...(sender.senderRole ? { senderRole: sender.senderRole } : {}),
                ...(sender.groupId ? { groupId: sender.groupId } : {}),
              }
            : {}),
        },
      }),
    );
    return { turn: { id, threadId: this.id, status: "running", startedAt, items: [] }, release };
  }

  private refuseIfBusy(): void {
    if (this.draining) throw appServerErrors.internal("the server is shutting down");
    const running = this.current;
    if (running) throw appServerErrors.turnInProgress(this.id, running.projector.turn.id);
  }

  /** Cancels the running turn `turnId` (asynchronously: `turn/cancelled` confirms). */
  interrupt(turnIdToStop: string, reason = "interrupted by the user"): void {
    const running = this.current;
    if (!running || running.projector.turn.id !== turnIdToStop) {
      const index = /^turn_(\d+)$/.exec(turnIdToStop);
      if (index && Number(index[1]) >= 1 && Number(index[1]) <= this.turnCount) {
        throw appServerErrors.turnNotRunning(turnIdToStop, "finished");
      }
      throw appServerErrors.turnNotFound(turnIdToStop, this.id);
    }
    running.cancelReason ??= reason;
    this.session.cancel(reason);
  }

  /** Resolves when no turn runs. */
  async idle(): Promise<void> {
    while (this.current) await this.current.done;
  }

  /**
   * The server stops: approvals nobody answered are decided by policy, nothing new starts. With
   * `cancel`, the running turn is cancelled too (SIGTERM); otherwise it may finish (stdin's end).
   */
  drain(cancel: boolean): void {
    this.draining = true;
    this.queued = [];
    for (const pending of this.current?.approvals.values() ?? []) {
      pending.decide(fallbackDecision(this.options.configuration()));
    }
    if (cancel && this.current) {
      this.current.cancelReason ??= "the server is shutting down";
      this.session.cancel("the server is shutting down");
    }
  }

  // --- the queue ---------------------------------------------------------------------------------

  enqueue(parts: readonly InputPart[], sender?: SenderContext): QueuedTurnInput {
    const entry: QueuedTurnInput = {
      id: `queued_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`,
      threadId: this.id,
      nativeInputParts: [...parts],
      materializedInputParts: [...parts],
      displayText: displayText(parts),
      ...(sender ? { sender } : {}),
      status: "queued",
      createdAt: now(),
      ...(this.current ? { readyAfterTurnId: this.current.projector.turn.id } : {}),
    };
    this.queued.push(entry);
    this.queueChanged();
    // Nothing running: the input goes at once.
    if (!this.current) this.startNextQueued();
    return entry;
  }

  removeQueued(id: string): boolean {
    const before = this.queued.length;
    this.queued = this.queued.filter((entry) => entry.id !== id);
    if (this.queued.length === before) return false;
    this.queueChanged();
    return true;
  }

  /** Marks a queued input as guidance for the running turn: it runs right after it, before the queue. */
  steer(expectedTurnId: string, queuedInputId: string): boolean {
    const running = this.current;
    if (!running || running.projector.turn.id !== expectedTurnId) {
      throw appServerErrors.turnNotRunning(expectedTurnId, running ? "not the running turn" : "finished");
    }
    const index = this.queued.findIndex((entry) => entry.id === queuedInputId);
    if (index === -1) return false;
    const [entry] = this.queued.splice(index, 1);
    this.queued.unshift({ ...entry!, status: "guidancePending" });
    this.queueChanged();
    return true;
  }

  private queueChanged(): void {
    this.send("thread/queue/updated", { threadId: this.id, queuedInputs: this.queued });
  }

  private startNextQueued(): void {
    const next = this.queued[0];
    if (!next || this.current || this.draining) return;
    this.queued.shift();
    this.queueChanged();
    const mode: DeliveryMode = next.status === "guidancePending" ? "guidance" : "queued";
    this.start(next.nativeInputParts, { ...(next.sender ? { sender: next.sender } : {}), deliveryMode: mode })
      .then(({ release }) => release())
      .catch((error: Error) =>
        this.options.logger.warn({ thread: this.id, err: error.message }, "queued input not started"),
      );
  }

  // --- the pump ----------------------------------------------------------------------------------

  private async pump(
    running: RunningTurn,
    stream: AsyncIterable<HubEvent>,
    userMessage: Pick<Item, "type" | "payload">,
  ): Promise<void> {
    const { projector } = running;
    const turn = projector.turn;
    const userItem = projector.record(userMessage);
    this.send("turn/started", { turn: { ...turn, items: [userItem] } });
    this.send("item/started", { threadId: this.id, turnId: turn.id, item: userItem });
    this.send("item/completed", { threadId: this.id, turnId: turn.id, item: userItem });
    this.options.onRuntimeChanged(this.runtime);
    let end: Extract<TurnEvent, { type: "turn_end" }> | undefined;
    try {
      for await (const event of stream) {
        // This loop never waits, so the hub never detaches it; should it ever, the turn fails here.
        if (event.type === "lagged")
          throw new Error(`the thread fell behind its turn (${event.dropped} events)`);
        projector.event(event);
        if (event.type === "tool_requested" && event.needsApproval) void this.approve(running, event);
        if (event.type === "turn_end") end = event;
        if (event.type === "subagent_started") this.options.onSubAgent?.(event, this.send);
        if (event.type === "subagent_progress") {
          running.progress ??= new SubAgentProgressTracker(this.id, turn.id, this.send);
          running.progress.update(event);
        }
      }
    } catch (error) {
      this.options.logger.error({ thread: this.id, err: (error as Error).stack }, "turn stream failed");
      projector.event({
        type: "error",
        turnId: turn.id,
        failure: "internal",
        message: (error as Error).message,
        retryable: false,
      });
    }
    projector.closeOpen();
    running.progress?.close();
    for (const pending of running.approvals.values()) pending.decide("decline");
    turn.completedAt = now();
    const reason = end?.reason ?? "error";
    // The last event goes to the audience while the turn still names its starter.
    if (running.failure) {
      turn.status = "failed";
      turn.error = running.failure.error;
      this.send("turn/failed", { turn, error: running.failure.error, code: running.failure.code });
      this.finish(running, { status: "failed", error: running.failure.error, code: running.failure.code });
    } else if (reason === "cancelled") {
      turn.status = "cancelled";
      const why = running.cancelReason ?? "cancelled";
      this.send("turn/cancelled", { turn, reason: why });
      this.finish(running, { status: "cancelled", error: why });
    } else if (reason === "error" || reason === "blocked") {
      turn.status = "failed";
      turn.error = projector.error ?? (reason === "blocked" ? "blocked by a hook" : "the turn failed");
      this.send("turn/failed", { turn, error: turn.error });
      this.finish(running, { status: "failed", error: turn.error });
    } else {
      turn.status = "completed";
      this.send("turn/completed", { turn });
      this.finish(running);
    }
    if (turn.status === "completed" || this.queued[0]?.status === "guidancePending") this.startNextQueued();
  }

  private finish(running: RunningTurn, outcome?: TurnOutcome): void {
    if (outcome) this.options.onOutcome(running.projector.turn.id, outcome);
    if (this.current === running) this.current = undefined;
    this.options.onRuntimeChanged(this.runtime);
  }

  private async approve(
    running: RunningTurn,
    event: Extract<TurnEvent, { type: "tool_requested" }>,
  ): Promise<void> {
    const { projector } = running;
    const turn = projector.turn;
    const { operation, target } = describeRequest(event, this.options.workspace);
    const requestId = `approval_${turn.id}_${event.callId}`;
    const approvalType = approvalTypeOf(event.category);
    const scopeKey = scopeKeyOf(event);
    const reason = event.description;
    const item = projector.addItem({
      type: "approvalRequest",
      payload: { approvalType, operation, target, requestId, scopeKey, reason },
    });
    const pending = new PendingApproval({
      params: {
        threadId: this.id,
        turnId: turn.id,
        itemId: item.id,
        requestId,
        approvalType,
        operation,
        target,
        scopeKey,
        reason,
      },
      category: event.category,
      callId: event.callId,
      item,
      timeoutMs: this.options.approvalTimeoutMs,
    });
    running.approvals.set(event.callId, pending);
    turn.status = "waitingApproval";
    this.options.onRuntimeChanged(this.runtime);
    const audience = this.audience();
    if (this.draining) pending.decide(fallbackDecision(this.options.configuration()));
    else if (audience.size > 0 && ![...audience].some((c) => c.capabilities.approvalSupport)) {
      pending.decide(fallbackDecision(this.options.configuration()));
    } else {
      for (const connection of audience) pending.ask(connection);
    }
    const outcome = await pending.outcome;
    running.approvals.delete(event.callId);
    let decision: ApprovalDecision;
    if ("timedOut" in outcome) {
      const timeout = appServerErrors.approvalTimeout(Math.round(this.options.approvalTimeoutMs / 1000));
      running.failure ??= { error: `${timeout.message} (${timeout.code})`, code: timeout.code };
      decision = "cancel";
    } else {
      decision = outcome.decision;
    }
    const responsePayload = { requestId, approved: decision.startsWith("accept"), decision };
    const response = projector.startItem({ type: "approvalResponse", payload: responsePayload });
    Object.assign(response, { status: "completed", completedAt: now() });
    this.send("item/approval/resolved", { threadId: this.id, turnId: turn.id, item: response as never });
    this.send("item/completed", { threadId: this.id, turnId: turn.id, item: response });
    if (running.approvals.size === 0 && turn.status === "waitingApproval") turn.status = "running";
    this.options.onRuntimeChanged(this.runtime);
    if (applyDecision(this.session, pending, decision)) {
      running.cancelReason ??= "cancelled at an approval";
      this.session.cancel(running.cancelReason);
    }
  }
}
