/**
 * What a session is made of and what the turn loop may see of it. Kept apart from session.ts so
 * the turn loop (turn.ts) and the session that starts it (session.ts) do not import each other.
 */
import type { ApprovalPolicy, PendingApprovals } from "./approvals.js";
import type { MessageOrigin } from "./events.js";
import type { HookRunner } from "./hooks.js";
import type {
  AgentMemory,
  ChatMessage,
  LlmProvider,
  SubAgentHomes,
  SubAgentProgress,
  SubAgentStarted,
  Tool,
  ToolContext,
  ToolOutput,
  ToolSpec,
  Usage,
} from "./types.js";

/** What the turn loop needs from the tool registry (engine/tools/registry.ts provides it). */
export interface ToolHost {
  get(name: string): Tool | undefined;
  specs(filter?: (tool: Tool) => boolean): readonly ToolSpec[];
  invoke(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Where a session's messages are persisted (the store implements it). */
export interface TranscriptSink {
  /** `origin` comes with the user message that started a turn (who sent it, through what). */
  append(
    sessionId: string,
    message: ChatMessage,
    meta: { turnId: string; origin?: MessageOrigin },
  ): void | Promise<void>;
  /**
   * Several messages of one session in one write: all of them are kept, in order, or none is (the
   * store writes them in one transaction). Without it, `append` is called for each.
   */
  appendMany?(sessionId: string, messages: readonly PendingMessage[]): void | Promise<void>;
}

/** A message appended to a session and not written to its sink yet. */
export interface PendingMessage {
  message: ChatMessage;
  meta: { turnId: string; origin?: MessageOrigin };
}

export interface MinimalLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface SessionConfig {
  sessionId?: string;
  agentId: string;
  tenantId?: string;
  provider: LlmProvider;
  model: string;
  system?: string;
  maxTokens: number;
  /** Model calls allowed per user message. */
  maxTurns: number;
  temperature?: number;
  thinkingBudget?: number;
  tools: ToolHost;
  /** The agent's tool allow-list: which registered tools this session may offer the model. */
  toolFilter?: (tool: Tool) => boolean;
  hooks?: HookRunner;
  policy?: ApprovalPolicy;
  workspace: string;
  unconfined?: boolean;
  /** Real paths of files outside the workspace that Read may open (attachments; see ToolContext). */
  readableFiles?: readonly string[];
  memory?: AgentMemory;
  history?: ChatMessage[];
  sink?: TranscriptSink;
  /** Overrides the provider's knowledge of the model's window (tokens). */
  contextWindow?: number;
  logger?: MinimalLogger;
  /**
   * When set, calls that would need approval are refused with this reason instead of waiting
   * (sub-agents and unattended channels have nobody to ask).
   */
  approvalsUnavailable?: string;
  /**
   * Gives the sub-agents this session spawns sessions of their own (see SubAgentHomes); set by a
   * door after the session is built. Sub-agents inherit it, so theirs get sessions too.
   */
  subAgents?: SubAgentHomes;
}

/** What a tool call brings besides its arguments. */
export interface ToolCallContext {
  callId: string;
  turnId?: string;
  signal: AbortSignal;
  /** Receives the output the tool streams while it runs. */
  onOutput?: (text: string) => void;
  /** Told when the call starts a sub-agent with a session of its own (and by its sub-agents, theirs). */
  onSubAgent?: (child: SubAgentStarted) => void;
  /** Told where the sub-agents the call started stand while they run. */
  onSubAgentProgress?: (progress: SubAgentProgress) => void;
}

/** The session as the turn loop sees it. */
export interface SessionState {
  readonly config: SessionConfig;
  readonly history: ChatMessage[];
  usage: Usage;
  readonly policy: ApprovalPolicy;
  readonly approvals: PendingApprovals;
  readonly hooks: HookRunner | undefined;
  readonly hookContext: { agentId: string; sessionId: string };
  readonly logger: MinimalLogger | undefined;
  /** Why calls that need approval are refused instead of waiting, if they are (see SessionConfig). */
  readonly approvalRefusal: string | undefined;
  /** Adds a message to the history; the sink gets it at the next `flush`. */
  append(message: ChatMessage, turnId: string, origin?: MessageOrigin): void;
  /**
   * Writes the messages appended since the last flush to the sink, in one write. The turn flushes
   * before anything outlives it (a tool runs, an approval is awaited), before it asks the model
   * again after tools ran, and before `turn_end`.
   */
  flush(): Promise<void>;
  /**
   * Whether `flush` has anything to write: the turn awaits a flush only then (with no sink, or
   * nothing new, an await would cost a promise and a microtask for nothing).
   */
  readonly unflushed: boolean;
  replaceHistory(messages: ChatMessage[]): void;
  /** The history's size in the estimate's characters, kept up to date as messages come and go. */
  readonly historyChars: number;
  toolSpecs(): readonly ToolSpec[];
  findTool(name: string): Tool | undefined;
  invokeTool(name: string, args: Record<string, unknown>, call: ToolCallContext): Promise<ToolOutput>;
  contextWindow(): number | undefined;
}
