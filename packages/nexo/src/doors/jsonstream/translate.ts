/**
 * Turn events → json-stream events. The door is a translator: the engine decides, this file only
 * renames. One function per direction keeps every wire name of the protocol in one place.
 */
import type * as jsonstream from "@nexo/wire/schemas/jsonstream";
import type { TurnEvent, TurnFailure } from "../../engine/events.js";
import type { ToolCategory, Usage } from "../../engine/types.js";

type Out = jsonstream.JsonStreamEvent;

/** Cache counters are omitted when zero, as the reference does and AionUi expects. */
export function wireUsage(u: Usage): jsonstream.JsonStreamUsage {
  return {
    input_tokens: u.inputTokens,
    output_tokens: u.outputTokens,
    ...(u.cacheReadTokens ? { cache_read_tokens: u.cacheReadTokens } : {}),
    ...(u.cacheWriteTokens ? { cache_write_tokens: u.cacheWriteTokens } : {}),
  };
}

/** The engine's tool categories are nexo's words; the protocol happens to use the same ones. */
function wireCategory(category: ToolCategory): jsonstream.JsonStreamToolCategory {
  switch (category) {
    case "info":
      return "info";
    case "edit":
      return "edit";
    case "exec":
      return "exec";
    case "mcp":
      return "mcp";
  }
}

function wireErrorCode(failure: TurnFailure): jsonstream.JsonStreamErrorCode {
  switch (failure) {
    case "provider":
      return "provider_error";
    case "internal":
      return "internal_error";
  }
}

/**
 * Translates one engine event for the message `msgId`; returns undefined for events the protocol
 * has no line for (item boundaries, argument and output deltas, usage — which travels in
 * stream_end — and a tool that runs without approval, which has no tool_request).
 */
export function toWire(event: TurnEvent, msgId: string): Out | undefined {
  switch (event.type) {
    case "turn_start":
      return { type: "stream_start", msg_id: msgId };
    case "text_delta":
      return { type: "text_delta", text: event.text, msg_id: msgId };
    case "reasoning_delta":
      return { type: "thinking", text: event.text, msg_id: msgId };
    case "tool_requested":
      if (!event.needsApproval) return undefined;
      return {
        type: "tool_request",
        msg_id: msgId,
        call_id: event.callId,
        tool: {
          name: event.name,
          category: wireCategory(event.category),
          args: event.args,
          description: event.description,
        },
      };
    case "tool_running":
      return { type: "tool_running", msg_id: msgId, call_id: event.callId, tool_name: event.name };
    case "tool_result":
      return {
        type: "tool_result",
        msg_id: msgId,
        call_id: event.callId,
        tool_name: event.name,
        status: event.status,
        output: event.output,
        output_type: event.outputType,
        ...(event.metadata ? { metadata: event.metadata } : {}),
      };
    case "tool_cancelled":
      return { type: "tool_cancelled", msg_id: msgId, call_id: event.callId, reason: event.reason };
    case "compaction":
      return {
        type: "info",
        msg_id: msgId,
        message: `compacted ${event.removedMessages} earlier messages into a summary to stay within the model's context window`,
      };
    case "info":
      return { type: "info", msg_id: msgId, message: event.message };
    case "error":
      return {
        type: "error",
        msg_id: msgId,
        error: { code: wireErrorCode(event.failure), message: event.message, retryable: event.retryable },
      };
    case "turn_end":
      return { type: "stream_end", msg_id: msgId, usage: wireUsage(event.usage) };
    case "message_start":
    case "message_end":
    case "reasoning_start":
    case "reasoning_end":
    case "tool_args_delta":
    case "approval_resolved":
    case "tool_output_delta":
    case "subagent_started":
    case "subagent_progress":
    case "step_usage":
    case "usage":
      return undefined;
  }
}
