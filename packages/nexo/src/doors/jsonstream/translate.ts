/**
 * Turn events → json-stream events. The door is a translator: the engine decides, this file only
 * renames. One function per direction keeps every wire name of the protocol in one place.
 */
import type * as jsonstream from "@nexo/wire/schemas/jsonstream";
import type { TurnEvent, Usage } from "../../engine/types.js";

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

/**
 * Translates one engine event for the message `msgId`; returns undefined for events the protocol
 * has no line for (a tool that runs without approval has no tool_request; usage travels in
 * stream_end).
 */
export function toWire(event: TurnEvent, msgId: string): Out | undefined {
  switch (event.type) {
    case "turn_start":
      return { type: "stream_start", msg_id: msgId };
    case "text_delta":
      return { type: "text_delta", text: event.text, msg_id: msgId };
    case "thinking":
      return { type: "thinking", text: event.text, msg_id: msgId };
    case "tool_requested":
      if (!event.needsApproval) return undefined;
      return {
        type: "tool_request",
        msg_id: msgId,
        call_id: event.callId,
        tool: {
          name: event.name,
          category: event.category,
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
    case "info":
      return { type: "info", msg_id: msgId, message: event.message };
    case "error":
      return {
        type: "error",
        msg_id: msgId,
        error: { code: event.code, message: event.message, retryable: event.retryable },
      };
    case "usage":
      return undefined;
    case "turn_end":
      return { type: "stream_end", msg_id: msgId, usage: wireUsage(event.usage) };
  }
}
