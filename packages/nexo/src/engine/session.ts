/**
 * A conversation with one agent: its history, usage, approval state, the turn running now, and the
 * hub its turns publish to. Doors start turns here and read them from the hub (or from the stream
 * `runTurn` returns); they never run a turn themselves. A turn runs to its end whoever reads it.
 */
import { randomUUID } from "node:crypto";
import { ApprovalPolicy, PendingApprovals } from "./approvals.js";
import { messageChars } from "./compaction.js";
import type { MessageOrigin, TurnInput, TurnOutcome } from "./events.js";
import { withToolResults } from "./history-repair.js";
import type { HookRunner } from "./hooks.js";
import type {
  MinimalLogger,
  PendingMessage,
  SessionConfig,
  SessionState,
  ToolCallContext,
} from "./session-types.js";
import { type HubEvent, ThreadHub } from "./thread-hub.js";
import { runTurn } from "./turn.js";
import { TurnRun } from "./turn-run.js";
import {
  type ApprovalScope,
  type ChatMessage,
  type ContentBlock,
  emptyUsage,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type ToolSpec,
  type Usage,
} from "./types.js";

/** A turn's input: text, content blocks, or content with its origin. */
export type TurnInputLike = string | ContentBlock[] | TurnInput;

export function toTurnInput(input: TurnInputLike): TurnInput {
  if (typeof input === "string") return { content: [{ type: "text", text: input }] };
  return Array.isArray(input) ? { content: input } : input;
}

export interface StartTurnOptions {
  /** Cancels the turn when it aborts. */
  signal?: AbortSignal;
  /** The turn's id, when the caller chose it beforehand (to subscribe to it first). */
  turnId?: string;
}

/** A started turn: its id, and how it ended once it has. */
export interface TurnHandle {
  turnId: string;
  done: Promise<TurnOutcome>;
}

/** The turn a session runs now: its id, how to stop it, and the caller's signal it follows. */
interface RunningTurn {
  turnId: string;
  run: TurnRun;
  done: Promise<TurnOutcome>;
  outer: AbortSignal | undefined;
}

/** Thrown when a turn is started while another one runs in the same session. */
export class SessionBusyError extends Error {
  constructor(sessionId: string) {
    super(`session ${sessionId} is already running a turn`);
    this.name = "SessionBusyError";
  }
}

export class AgentSession implements SessionState {
  readonly id: string;
  readonly config: SessionConfig;
  readonly policy: ApprovalPolicy;
  readonly approvals: PendingApprovals;
  readonly hookContext: { agentId: string; sessionId: string };
  /** Every event of every turn of this session, for any number of readers. */
  readonly hub = new ThreadHub();
  usage: Usage = emptyUsage();
  private messages: ChatMessage[];
  private charCount = 0;
  private current: RunningTurn | undefined;
  private refusal: string | undefined;
  private readonly readable: Set<string>;
  /** Appended messages the sink has not been given yet (see `flush`). */
  private unwritten: PendingMessage[] = [];

  constructor(config: SessionConfig) {
    this.config = config;
    this.id = config.sessionId ?? randomUUID();
    // A history a killed process left with a tool call but no result is completed first.
    this.messages = [...withToolResults(config.history ?? [])];
    for (const m of this.messages) this.charCount += messageChars(m);
    this.policy = config.policy ?? new ApprovalPolicy();
    this.approvals = new PendingApprovals(this.policy);
    this.hookContext = { agentId: config.agentId, sessionId: this.id };
    this.readable = new Set(config.readableFiles ?? []);
  }

  /** Files outside the workspace that Read may open in this session (see `allowReading`). */
  get readableFiles(): ReadonlySet<string> {
    return this.readable;
  }

  /**
   * Lets Read open these files although they lie outside the workspace — the files the user
   * attached. `realPaths` must be real paths (symlinks resolved): only an exact match is honoured.
   * Returns the paths that were not readable before.
   */
  allowReading(realPaths: Iterable<string>): string[] {
    const added: string[] = [];
    for (const path of realPaths) {
      if (this.readable.has(path)) continue;
      this.readable.add(path);
      added.push(path);
    }
    return added;
  }

  get history(): ChatMessage[] {
    return this.messages;
  }

  get hooks(): HookRunner | undefined {
    return this.config.hooks;
  }

  get logger(): MinimalLogger | undefined {
    return this.config.logger;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  /** The running turn's id. */
  get currentTurnId(): string | undefined {
    return this.current?.turnId;
  }

  /**
   * Starts a turn; its events go to the hub, and it runs to its end whether or not anyone reads
   * them. Throws SessionBusyError when a turn is already running.
   */
  startTurn(input: TurnInputLike, options: StartTurnOptions = {}): TurnHandle {
    if (this.current) throw new SessionBusyError(this.id);
    const outer = options.signal;
    const turnId = options.turnId ?? randomUUID();
    const run = new TurnRun(turnId, this, this.hub);
    const current: RunningTurn = { turnId, run, done: undefined as unknown as Promise<TurnOutcome>, outer };
    if (outer !== undefined) {
      if (outer.aborted) run.stop(outer.reason);
      else outer.addEventListener("abort", this, { once: true });
    }
    current.done = runTurn(run, toTurnInput(input)).then(
      (outcome) => this.turnEnded(current, outcome),
      (error: unknown) => this.turnEnded(current, this.turnFailed(run, error)),
    );
    this.current = current;
    return { turnId, done: current.done };
  }

  /** The outer signal of the running turn aborted (the session listens as an EventListener object). */
  handleEvent(): void {
    const current = this.current;
    if (current?.outer?.aborted) current.run.stop(current.outer.reason);
  }

  /** runTurn reports its own failures; this is the last guard so readers always see an end. */
  private turnFailed(run: TurnRun, error: unknown): TurnOutcome {
    const { turnId } = run;
    this.logger?.error({ err: (error as Error)?.stack, turnId }, "turn loop failed");
    if (!run.ended) {
      const message = (error as Error)?.message ?? String(error);
      run.emit({ type: "error", turnId, failure: "internal", message, retryable: false });
      run.end({ type: "turn_end", turnId, reason: "error", usage: run.usage });
    }
    return { turnId, reason: "error", usage: run.usage };
  }

  private turnEnded(current: RunningTurn, outcome: TurnOutcome): TurnOutcome {
    current.outer?.removeEventListener("abort", this);
    if (this.current === current) this.current = undefined;
    // Neither `cancel` nor the caller's signal can reach the turn now.
    current.run.release();
    return outcome;
  }

  /**
   * Starts a turn and returns its events, from `turn_start` to `turn_end` (the stream always ends
   * with it). Reading slowly never slows the turn; a reader that falls far behind gets `lagged`
   * (see ThreadHub). Throws SessionBusyError when a turn is already running.
   */
  runTurn(input: TurnInputLike, options: StartTurnOptions = {}): AsyncIterable<HubEvent> {
    if (this.current) throw new SessionBusyError(this.id);
    const turnId = options.turnId ?? randomUUID();
    const events = this.hub.subscribe({ turnId });
    // Not `{ ...options, turnId }`: a spread followed by a property is V8's slow path (~1 µs).
    this.startTurn(input, options.signal === undefined ? { turnId } : { signal: options.signal, turnId });
    return events;
  }

  /** Resolves with how the running turn ended (undefined when none runs). */
  async idle(): Promise<TurnOutcome | undefined> {
    return this.current?.done;
  }

  /** Cancels the running turn (LLM request, running tools, pending approvals). */
  cancel(reason = "stopped by the user"): boolean {
    if (!this.current) return false;
    this.current.run.stop(new Error(reason));
    return true;
  }

  approve(callId: string, scope: ApprovalScope = "once"): boolean {
    return this.approvals.approve(callId, scope);
  }

  deny(callId: string, reason: string): boolean {
    return this.approvals.deny(callId, reason);
  }

  /**
   * Nobody can answer approvals any more (e.g. the json-stream client closed stdin): pending ones
   * are denied with `reason`, and later calls that would need one are refused with it.
   */
  refuseApprovals(reason: string): void {
    this.refusal = reason;
    this.approvals.denyAll(reason);
  }

  /** Why calls that need approval are refused now, if they are. */
  get approvalRefusal(): string | undefined {
    return this.refusal ?? this.config.approvalsUnavailable;
  }

  /**
   * Seeds the conversation with prior context (json-stream `init_history`): a user message
   * carrying the text and an assistant acknowledgement, persisted like any other message.
   */
  async seedHistory(text: string): Promise<void> {
    const turnId = "init_history";
    this.append(
      { role: "user", content: [{ type: "text", text: `[Earlier conversation]\n${text}` }] },
      turnId,
    );
    this.append(
      { role: "assistant", content: [{ type: "text", text: "I have the earlier conversation in mind." }] },
      turnId,
    );
    await this.flush();
  }

  get historyChars(): number {
    return this.charCount;
  }

  append(message: ChatMessage, turnId: string, origin?: MessageOrigin): void {
    this.messages.push(message);
    this.charCount += messageChars(message);
    if (this.config.sink === undefined) return;
    this.unwritten.push({ message, meta: origin === undefined ? { turnId } : { turnId, origin } });
  }

  get unflushed(): boolean {
    return this.unwritten.length > 0;
  }

  /**
   * Writes what was appended since the last flush in one write (one transaction in the store),
   * not one per message. A failed write is not retried: it throws, and its messages stay only in
   * the history, as a failed single append left them.
   */
  async flush(): Promise<void> {
    const sink = this.config.sink;
    if (sink === undefined || this.unwritten.length === 0) return;
    const batch = this.unwritten;
    this.unwritten = [];
    if (sink.appendMany !== undefined) {
      await sink.appendMany(this.id, batch);
      return;
    }
    for (const { message, meta } of batch) await sink.append(this.id, message, meta);
  }

  replaceHistory(messages: ChatMessage[]): void {
    this.messages = messages;
    this.charCount = messages.reduce((sum, m) => sum + messageChars(m), 0);
  }

  toolSpecs(): readonly ToolSpec[] {
    return this.config.tools.specs(this.config.toolFilter);
  }

  findTool(name: string): Tool | undefined {
    const tool = this.config.tools.get(name);
    if (!tool) return undefined;
    if (this.config.toolFilter && !this.config.toolFilter(tool)) return undefined;
    return tool;
  }

  invokeTool(name: string, args: Record<string, unknown>, call: ToolCallContext): Promise<ToolOutput> {
    if (!this.findTool(name)) {
      const offered = this.toolSpecs()
        .map((t) => t.name)
        .join(", ");
      return Promise.resolve({
        output: `Unknown tool "${name}". Available tools: ${offered || "none"}.`,
        isError: true,
      });
    }
    // Built field by field: this runs for every tool call, and spread-in optional fields each
    // cost a throw-away object.
    const { config } = this;
    const ctx: ToolContext = {
      signal: call.signal,
      sessionId: this.id,
      agentId: config.agentId,
      callId: call.callId,
      workspace: config.workspace,
      unconfined: config.unconfined ?? false,
    };
    if (call.onOutput) ctx.onOutput = call.onOutput;
    if (call.onSubAgentProgress) ctx.onSubAgentProgress = call.onSubAgentProgress;
    this.addSubAgentContext(ctx, call);
    if (this.readable.size > 0) ctx.readableFiles = this.readable;
    if (config.memory) ctx.memory = config.memory;
    if (config.logger) ctx.logger = config.logger;
    return config.tools.invoke(name, args, ctx);
  }

  /**
   * Adds what a tool call needs to give the sub-agents it starts sessions of their own (a door set
   * `subAgents` and this session keeps a transcript: its sink keeps the sub-agents' too), and the
   * listener told of each one started.
   */
  private addSubAgentContext(ctx: ToolContext, call: ToolCallContext): void {
    const { subAgents, sink } = this.config;
    const onSubAgent = call.onSubAgent;
    if (onSubAgent !== undefined) ctx.onSubAgent = onSubAgent;
    if (subAgents === undefined || sink === undefined) return;
    ctx.subAgentHome = (start) => {
      const sessionId = subAgents({
        ...start,
        parentSessionId: this.id,
        turnId: call.turnId ?? "",
        callId: call.callId,
      });
      if (sessionId === undefined) return undefined;
      onSubAgent?.({
        sessionId,
        parentSessionId: this.id,
        depth: start.depth,
        ...(start.description === undefined ? {} : { description: start.description }),
      });
      return { sessionId, sink, subAgents };
    };
  }

  contextWindow(): number | undefined {
    return this.config.contextWindow ?? this.config.provider.contextWindow?.(this.config.model);
  }
}
