/**
 * The engine's vocabulary, shared by the turn loop, providers, tools, hooks and every door.
 *
 * Conversation content uses one canonical shape (content blocks in the style of the Anthropic
 * Messages API) that each provider translates to and from its own wire format, so a session can
 * move between providers and be stored once.
 */

// --- conversation content (declared in ../conversation.ts, shared with the store) ------------

import type { ChatMessage } from "../conversation.js";
import type { ToolCategory } from "../permissions.js";

export type {
  ChatMessage,
  ContentBlock,
  ImageBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from "../conversation.js";

// --- usage ------------------------------------------------------------------------------------

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  return {
    inputTokens: a.inputTokens + (b.inputTokens ?? 0),
    outputTokens: a.outputTokens + (b.outputTokens ?? 0),
    cacheReadTokens: a.cacheReadTokens + (b.cacheReadTokens ?? 0),
    cacheWriteTokens: a.cacheWriteTokens + (b.cacheWriteTokens ?? 0),
  };
}

// --- LLM providers -----------------------------------------------------------------------------

/** What a model is told about a tool. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
}

export interface ChatRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  tools?: readonly ToolSpec[];
  maxTokens: number;
  temperature?: number;
  /** Extended thinking budget in tokens, when the provider supports it. */
  thinkingBudget?: number;
  signal?: AbortSignal;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal" | "other";

/** What a provider streams back for one request. */
export type ProviderEvent =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; text: string; signature?: string }
  /**
   * A fragment of a tool call's arguments (raw JSON text) while the model writes them. `index` is
   * the call's position in the response; `id` and `name` come with the first fragment of a call.
   */
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; delta: string }
  /**
   * A complete tool call (providers assemble argument deltas before emitting it); `index` matches
   * the call's `tool_call_delta`s when the provider streamed them.
   */
  | { type: "tool_call"; id: string; name: string; input: Record<string, unknown>; index?: number }
  | { type: "usage"; usage: Partial<Usage> }
  | { type: "stop"; reason: StopReason }
  /** The provider is retrying after a transient failure (nothing was streamed yet). */
  | { type: "retry"; attempt: number; maxAttempts: number; delayMs: number; reason: string };

/**
 * A model endpoint. `stream` yields events until the response is complete; it throws one of the
 * typed LLM errors of @nexo/wire (LlmAuthenticationError, LlmRateLimitedError, …) on failure and
 * stops promptly when `request.signal` aborts.
 */
export interface LlmProvider {
  /** e.g. "anthropic", "openai", "scripted", or a plugin's provider name. */
  readonly id: string;
  /** The model's context window in tokens, when known, for compaction. */
  contextWindow?(model: string): number | undefined;
  stream(request: ChatRequest): AsyncIterable<ProviderEvent>;
}

// --- tools -------------------------------------------------------------------------------------

export type { ApprovalGrant, ApprovalMode, ToolCategory } from "../permissions.js";

export type ToolOutputType = "text" | "diff" | "image";

/**
 * The typed result of tools whose results clients show in their own way: a command run (Bash) and
 * a file change (Write, Edit), with the unified diff of the change.
 */
export type ToolResultDetail =
  | {
      kind: "command";
      command: string;
      /** The directory it ran in. */
      cwd: string;
      exitCode: number | null;
      signal: string | null;
      timedOut: boolean;
      cancelled: boolean;
      /** Bytes of output it wrote, and how many of them were cut from what the model sees. */
      outputBytes: number;
      truncatedBytes: number;
    }
  /** `path` is the file's real path; `diff` is absent when either version is binary or too big. */
  | { kind: "file_change"; path: string; change: "created" | "modified"; diff?: string };

export interface ToolOutput {
  /** What the model sees as the tool result (and the door shows, truncated if long). */
  output: string;
  outputType?: ToolOutputType;
  /** The typed result, for tools that have one (command runs, file changes). */
  detail?: ToolResultDetail;
  /** The tool's free extras for doors, e.g. {file_path} for a diff. */
  metadata?: Record<string, unknown>;
  /** The tool ran but failed; the model sees the output as an error result. */
  isError?: boolean;
}

/** Long-term memory as tools and plugins see it (implemented by the store). */
export interface MemoryEntry {
  id: string;
  agentId: string;
  content: string;
  tags: string[];
  conceptTags: string[];
  createdAt: string;
}

export interface AgentMemory {
  store(agentId: string, content: string, tags?: string[]): Promise<MemoryEntry>;
  recall(agentId: string, query: string, limit?: number): Promise<MemoryEntry[]>;
}

/** Where a tool writes what the operator should see but the model and its users should not. */
export interface ToolLogger {
  warn(details: object, message?: string): void;
}

/** A sub-agent a tool call (Spawn) is about to start. */
export interface SubAgentStart {
  /** How deep the sub-agent is: 1 for a sub-agent of the top-level agent. */
  depth: number;
  task: string;
  /** The short label the model gave the task. */
  description?: string;
}

/**
 * Gives sub-agents sessions of their own (a door's choice: the AppServer keeps them as child
 * threads): makes the session for a sub-agent of `parentSessionId` about to start and returns its
 * id, or undefined to run the sub-agent without a kept conversation.
 */
export type SubAgentHomes = (
  start: SubAgentStart & { parentSessionId: string; turnId: string; callId: string },
) => string | undefined;

/** Appends a session's messages to its transcript (the parent's transcript sink serves its sub-agents too). */
export interface MessageSink {
  append(sessionId: string, message: ChatMessage, meta: { turnId: string }): void | Promise<void>;
  /** Several messages in one write (see TranscriptSink.appendMany). */
  appendMany?(
    sessionId: string,
    messages: readonly { message: ChatMessage; meta: { turnId: string } }[],
  ): void | Promise<void>;
}

/** Where a sub-agent's conversation is kept, and how its own sub-agents get theirs. */
export interface SubAgentHome {
  sessionId: string;
  sink: MessageSink;
  subAgents: SubAgentHomes;
}

/** A sub-agent started with a session of its own (reported to the turn that spawned it, nested ones too). */
export interface SubAgentStarted {
  sessionId: string;
  parentSessionId: string;
  depth: number;
  description?: string;
}

/** Where a sub-agent stands, reported while it runs (this call's or a nested one's). */
export interface SubAgentProgress {
  sessionId: string;
  /** The task's short label (the model's description, else the task's start). */
  label: string;
  depth: number;
  /** The tool it is running now, if any. */
  currentTool?: string;
  /** Its turn's tokens so far. */
  inputTokens: number;
  outputTokens: number;
  /** Its turn has ended (however). */
  completed: boolean;
}

export interface ToolContext {
  signal: AbortSignal;
  sessionId: string;
  agentId: string;
  callId: string;
  /** Absolute path file tools are confined to. */
  workspace: string;
  /** When true, file tools may leave the workspace (set only explicitly by the operator). */
  unconfined: boolean;
  /**
   * Files outside the workspace that Read may open anyway, by exact real path: the attachments the
   * user sent in this conversation. No other tool reads them, and nothing writes them.
   */
  readableFiles?: ReadonlySet<string>;
  memory?: AgentMemory;
  /** Output the tool streams while it runs (a command's stdout and stderr); shown live by doors. */
  onOutput?: (text: string) => void;
  /**
   * Where a sub-agent this call starts (Spawn) keeps its conversation, when the session's door
   * gives sub-agents sessions of their own; undefined: the sub-agent's conversation is not kept.
   */
  subAgentHome?: (start: SubAgentStart) => SubAgentHome | undefined;
  /** Reports a sub-agent started with a session of its own, this call's or a nested one's. */
  onSubAgent?: (child: SubAgentStarted) => void;
  /** Reports where a sub-agent this call started stands (nested ones' too). */
  onSubAgentProgress?: (progress: SubAgentProgress) => void;
  /** The session's logger (refused paths are logged here with their real locations). */
  logger?: ToolLogger;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments; validated (ajv) before `execute` is called. */
  readonly inputSchema: Record<string, unknown>;
  readonly category: ToolCategory;
  /** Where the tool comes from, for logs and namespacing. */
  readonly source: "builtin" | "mcp" | "plugin" | "microapp";
  /** The MCP server, plugin or microapp offering it (absent for built-ins). */
  readonly origin?: string;
  /** A one-line human description of a call, e.g. "Write to src/main.rs". */
  describe?(args: Record<string, unknown>): string;
  /**
   * For tools that run a command line (Bash): the line this call runs. Approvals use it, so that
   * "always" for `echo hi` grants `echo` and nothing else.
   */
  command?(args: Record<string, unknown>): string | undefined;
  /**
   * Never waits for approval, whatever the session's policy: for tools whose whole point is to
   * reach a human (`escalate`), where waiting on a human first would defeat them. Only built-ins
   * set it; the policy is never consulted for such a tool.
   */
  readonly approvalExempt?: true;
  /** Runs the tool. Throw for failures that are not the tool's normal output. */
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
}

// --- approvals ---------------------------------------------------------------------------------

export type ApprovalScope = "once" | "always";
export type ApprovalDecision = { approved: true; scope: ApprovalScope } | { approved: false; reason: string };

// --- hooks -------------------------------------------------------------------------------------

/** Named points in a turn where registered handlers vote. */
export type HookPoint = "before_message" | "before_tool" | "after_tool" | "before_reply";

export type HookVote =
  | { decision: "continue" }
  | { decision: "block"; reason: string }
  /** Replaces the payload (the message text, the tool args, the tool output or the reply). */
  | { decision: "transform"; payload: Record<string, unknown> };

export interface HookHandler {
  /** For logs: "plugin:pii_redactor", "microapp:acme". */
  readonly name: string;
  readonly points: readonly HookPoint[];
  /** Failures and timeouts count as "continue" (the contract's continue-on-error rule). */
  onHook(
    point: HookPoint,
    payload: Record<string, unknown>,
    ctx: { agentId: string; sessionId: string },
  ): Promise<HookVote>;
}
