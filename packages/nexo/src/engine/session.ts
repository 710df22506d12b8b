/**
 * A conversation with one agent: its history, usage, approval state and the turn running now.
 * Doors create sessions and run turns through them; they never run a turn themselves.
 */
import { randomUUID } from "node:crypto";
import { ApprovalPolicy, PendingApprovals } from "./approvals.js";
import { messageChars } from "./compaction.js";
import { EventChannel } from "./event-channel.js";
import type { HookRunner } from "./hooks.js";
import type { MinimalLogger, SessionConfig, SessionState } from "./session-types.js";
import { runTurn } from "./turn.js";
import {
  type ApprovalScope,
  type ChatMessage,
  type ContentBlock,
  emptyUsage,
  type Tool,
  type ToolOutput,
  type ToolSpec,
  type TurnEvent,
  type Usage,
} from "./types.js";

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
  usage: Usage = emptyUsage();
  private messages: ChatMessage[];
  private charCount = 0;
  private current: { controller: AbortController; done: Promise<void> } | undefined;
  private refusal: string | undefined;
  private readonly readable: Set<string>;

  constructor(config: SessionConfig) {
    this.config = config;
    this.id = config.sessionId ?? randomUUID();
    this.messages = [...(config.history ?? [])];
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

  /**
   * Starts a turn and returns its event stream. The stream always ends with `turn_end`, whatever
   * happens. Throws SessionBusyError when a turn is already running.
   */
  runTurn(input: string | ContentBlock[], options: { signal?: AbortSignal } = {}): AsyncIterable<TurnEvent> {
    if (this.current) throw new SessionBusyError(this.id);
    const content: ContentBlock[] = typeof input === "string" ? [{ type: "text", text: input }] : input;
    const controller = new AbortController();
    const outer = options.signal;
    const forward = () => controller.abort(outer?.reason);
    if (outer) {
      if (outer.aborted) controller.abort(outer.reason);
      else outer.addEventListener("abort", forward, { once: true });
    }
    const events = new EventChannel<TurnEvent>();
    const turnId = randomUUID();
    const done = runTurn({ turnId, session: this, events, signal: controller.signal }, content)
      .catch((error: unknown) => events.fail(error))
      .finally(() => {
        outer?.removeEventListener("abort", forward);
        this.current = undefined;
        events.end();
      });
    this.current = { controller, done };
    return events;
  }

  /** Cancels the running turn (LLM request, running tools, pending approvals). */
  cancel(reason = "stopped by the user"): boolean {
    if (!this.current) return false;
    this.current.controller.abort(new Error(reason));
    return true;
  }

  /** Resolves when the running turn (if any) has finished. */
  async idle(): Promise<void> {
    await this.current?.done;
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
    await this.append(
      { role: "user", content: [{ type: "text", text: `[Earlier conversation]\n${text}` }] },
      turnId,
    );
    await this.append(
      { role: "assistant", content: [{ type: "text", text: "I have the earlier conversation in mind." }] },
      turnId,
    );
  }

  get historyChars(): number {
    return this.charCount;
  }

  async append(message: ChatMessage, turnId: string): Promise<void> {
    this.messages.push(message);
    this.charCount += messageChars(message);
    await this.config.sink?.append(this.id, message, { turnId });
  }

  replaceHistory(messages: ChatMessage[]): void {
    this.messages = messages;
    this.charCount = messages.reduce((sum, m) => sum + messageChars(m), 0);
  }

  toolSpecs(): ToolSpec[] {
    return this.config.tools.specs(this.config.toolFilter);
  }

  findTool(name: string): Tool | undefined {
    const tool = this.config.tools.get(name);
    if (!tool) return undefined;
    if (this.config.toolFilter && !this.config.toolFilter(tool)) return undefined;
    return tool;
  }

  invokeTool(
    name: string,
    args: Record<string, unknown>,
    callId: string,
    signal: AbortSignal,
  ): Promise<ToolOutput> {
    if (!this.findTool(name)) {
      const offered = this.toolSpecs()
        .map((t) => t.name)
        .join(", ");
      return Promise.resolve({
        output: `Unknown tool "${name}". Available tools: ${offered || "none"}.`,
        isError: true,
      });
    }
    return this.config.tools.invoke(name, args, {
      signal,
      sessionId: this.id,
      agentId: this.config.agentId,
      callId,
      workspace: this.config.workspace,
      unconfined: this.config.unconfined ?? false,
      ...(this.readable.size > 0 ? { readableFiles: this.readable } : {}),
      ...(this.config.memory ? { memory: this.config.memory } : {}),
      ...(this.config.logger ? { logger: this.config.logger } : {}),
    });
  }

  contextWindow(): number | undefined {
    return this.config.contextWindow ?? this.config.provider.contextWindow?.(this.config.model);
  }
}
