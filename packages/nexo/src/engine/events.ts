/**
 * What a turn tells the world, in the engine's own words: the input it started from, and an event
 * for every step of its work — items with ids and boundaries (the model's text and reasoning, one
 * of each per model call; tool calls by their call id), deltas while they stream, typed tool
 * results, compaction, usage, and the end. Doors translate these into their protocols (json-stream
 * lines, AppServer items); nothing here borrows a protocol's names.
 *
 * Every event carries its `turnId`. Item ids (`itemId`) are unique within their turn; tool calls
 * are keyed by `callId`, also unique within the turn (the turn re-keys ids a model repeats).
 */
import type { ApprovalGrant } from "../permissions.js";
import type {
  ApprovalDecision,
  ContentBlock,
  SubAgentProgress,
  Tool,
  ToolCategory,
  ToolOutputType,
  ToolResultDetail,
  Usage,
} from "./types.js";

/** Who sent a message and through what; stored with the user message in the transcript. */
export interface MessageOrigin {
  /** The channel or door it came through: a channel plugin's kind ("telegram"), "json-stream". */
  channel?: string;
  /** Who wrote it on that channel. */
  senderId?: string;
  /** The channel's own id for the message (replies, de-duplication). */
  messageId?: string;
}

/** What a turn starts from: the user's content and, when known, where it came from. */
export interface TurnInput {
  content: ContentBlock[];
  origin?: MessageOrigin;
  /**
   * The message is already the last one of the stored history (a turn killed with the daemon, run
   * again from the durable inbox): the turn answers it without storing it, or hooking it, again.
   */
  alreadyStored?: boolean;
  /**
   * The caller keeps the input durably until the turn has ended (the daemon's inbox keeps the
   * message until its reply is handed over): the user message is then written with the turn's
   * first group of transcript writes instead of in a write of its own before the model is asked.
   */
  durable?: boolean;
}

/** Where a tool comes from: built in, or the MCP server, plugin or microapp (`id`) that offers it. */
export interface ToolSource {
  kind: Tool["source"];
  id?: string;
}

/** Why a turn failed: the model's API (authentication, limits, overflow, connection) or a bug. */
export type TurnFailure = "provider" | "internal";

export type TurnEndReason = "completed" | "cancelled" | "error" | "max_turns" | "blocked";

export type TurnEvent =
  /** First, once: the input after `before_message` hooks (what the model will see). */
  | { type: "turn_start"; turnId: string; input: TurnInput }
  /** The model's answer text of one model call: start, deltas, and the end with the whole text. */
  | { type: "message_start"; turnId: string; itemId: string }
  | { type: "text_delta"; turnId: string; itemId: string; text: string }
  | { type: "message_end"; turnId: string; itemId: string; text: string }
  /** The model's reasoning (extended thinking) of one model call, likewise. */
  | { type: "reasoning_start"; turnId: string; itemId: string }
  | { type: "reasoning_delta"; turnId: string; itemId: string; text: string }
  | { type: "reasoning_end"; turnId: string; itemId: string; text: string }
  /**
   * A fragment of a tool call's arguments (raw JSON text) while the model writes them, from
   * providers that stream them; `name` comes with every fragment. The complete call follows as
   * `tool_requested` with the same `callId`.
   */
  | { type: "tool_args_delta"; turnId: string; callId: string; name: string; delta: string }
  /**
   * The model asked for a tool. `needsApproval` says whether the turn now waits for a decision;
   * `grant` is then what an approval with scope "always" would grant. `source` is absent for a
   * tool that does not exist (the call then fails with an error result).
   */
  | {
      type: "tool_requested";
      turnId: string;
      callId: string;
      name: string;
      source?: ToolSource;
      category: ToolCategory;
      args: Record<string, unknown>;
      description: string;
      needsApproval: boolean;
      grant?: ApprovalGrant;
    }
  /** An approval the turn waited for was answered (or refused: nobody can answer). */
  | { type: "approval_resolved"; turnId: string; callId: string; decision: ApprovalDecision }
  | { type: "tool_running"; turnId: string; callId: string; name: string }
  /**
   * A sub-agent started with a session of its own (Spawn, when the door keeps sub-agents'
   * conversations): `callId` is this turn's Spawn call it runs under — for a nested sub-agent, the
   * call of the top-level sub-agent it descends from; `parentSessionId` is the session that spawned it.
   */
  | {
      type: "subagent_started";
      turnId: string;
      callId: string;
      sessionId: string;
      parentSessionId: string;
      depth: number;
      description?: string;
    }
  /**
   * Where a sub-agent of this turn stands (Spawn): sent when it starts, when it starts or ends a
   * tool, after each of its model calls and when it ends. `callId` as for `subagent_started`;
   * `sessionId` is the sub-agent's own session (kept or not); `label` is its task's short label;
   * the tokens are its turn's so far.
   */
  | ({ type: "subagent_progress"; turnId: string; callId: string } & SubAgentProgress)
  /** Output a running tool streams (a command's stdout and stderr, as they arrive). */
  | { type: "tool_output_delta"; turnId: string; callId: string; text: string }
  /**
   * The tool finished. `durationMs` is its execution (approval wait excluded); `detail` is the
   * typed result of command runs and file changes; `metadata` is the tool's free extras.
   */
  | {
      type: "tool_result";
      turnId: string;
      callId: string;
      name: string;
      status: "success" | "error";
      output: string;
      outputType: ToolOutputType;
      durationMs: number;
      detail?: ToolResultDetail;
      metadata?: Record<string, unknown>;
    }
  /** Denied, blocked by a hook, refused, or stopped; `durationMs` when it had started running. */
  | {
      type: "tool_cancelled";
      turnId: string;
      callId: string;
      name: string;
      reason: string;
      durationMs?: number;
    }
  /** The older part of the conversation was summarised to fit the model's window. */
  | {
      type: "compaction";
      turnId: string;
      trigger: "threshold" | "overflow";
      removedMessages: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  /** After each model call: that call's usage and the turn's so far. */
  | { type: "step_usage"; turnId: string; usage: Usage; turn: Usage }
  /** A notice for people: retries, max_turns, hook blocks. */
  | { type: "info"; turnId: string; message: string }
  | { type: "error"; turnId: string; failure: TurnFailure; message: string; retryable: boolean }
  /** Just before the end: the turn's usage and the session's running total. */
  | { type: "usage"; turnId: string; turn: Usage; session: Usage }
  /** Last, exactly once, whatever happened. `reply` is the final text after `before_reply` hooks. */
  | { type: "turn_end"; turnId: string; reason: TurnEndReason; usage: Usage; reply?: string };

export type TurnEventType = TurnEvent["type"];

/** How a turn ended, as `startTurn(...).done` resolves. */
export interface TurnOutcome {
  turnId: string;
  reason: TurnEndReason;
  usage: Usage;
  reply?: string;
}
