/**
 * Anthropic Messages wire format, as the API sends it: SSE with an `event:` line naming each
 * event and a `data:` line holding the JSON (message_start, ping, content_block_start / _delta /
 * _stop per block, message_delta with stop reason and usage, message_stop), or one JSON message
 * when `stream` is false; errors as `{type:"error", error:{type, message}}`.
 */
import { openString } from "./json-template.js";
import type { ResolvedReply } from "./reply.js";
import { splitJson, splitText, splitTextJson } from "./reply.js";

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function anthropicStreamEvents(reply: ResolvedReply): string[] {
  const events: string[] = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: reply.id,
        type: "message",
        role: "assistant",
        model: reply.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: reply.usage.input,
          output_tokens: 1,
          cache_creation_input_tokens: reply.usage.cacheWrite,
          cache_read_input_tokens: reply.usage.cacheRead,
        },
      },
    }),
    sse("ping", { type: "ping" }),
  ];
  let index = 0;
  /** A content block: its start, its deltas (each a whole event, see `delta`/`textDeltas`), its stop. */
  const block = (start: unknown, deltas: readonly string[]) => {
    events.push(sse("content_block_start", { type: "content_block_start", index, content_block: start }));
    for (const delta of deltas) events.push(delta);
    events.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  };
  const delta = (value: unknown) =>
    sse("content_block_delta", { type: "content_block_delta", index, delta: value });
  /** One delta per piece of `text`, written from the event's template (json-template.ts). */
  const textDeltas = (type: string, key: string, text: string) => {
    const template = openString((mark) => ({
      type: "content_block_delta",
      index,
      delta: { type, [key]: mark },
    }));
    if (template === undefined) return splitText(text).map((piece) => delta({ type, [key]: piece }));
    const before = `event: content_block_delta\ndata: ${template.head}`;
    const after = `${template.tail}\n\n`;
    return splitTextJson(text).map((piece) => before + piece + after);
  };
  if (reply.thinking !== undefined) {
    block({ type: "thinking", thinking: "", signature: "" }, [
      ...textDeltas("thinking_delta", "thinking", reply.thinking),
      delta({ type: "signature_delta", signature: reply.signature }),
    ]);
  }
  if (reply.text !== "") {
    block({ type: "text", text: "" }, textDeltas("text_delta", "text", reply.text));
  }
  for (const call of reply.toolCalls) {
    block(
      { type: "tool_use", id: call.id, name: call.name, input: {} },
      splitJson(JSON.stringify(call.input)).map((partial_json) =>
        delta({ type: "input_json_delta", partial_json }),
      ),
    );
  }
  events.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: reply.stopReason, stop_sequence: null },
      usage: { output_tokens: reply.usage.output },
    }),
    sse("message_stop", { type: "message_stop" }),
  );
  return events;
}

export function anthropicMessage(reply: ResolvedReply): unknown {
  const content: unknown[] = [];
  if (reply.thinking !== undefined)
    content.push({ type: "thinking", thinking: reply.thinking, signature: reply.signature });
  if (reply.text !== "") content.push({ type: "text", text: reply.text });
  for (const call of reply.toolCalls)
    content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input });
  return {
    id: reply.id,
    type: "message",
    role: "assistant",
    model: reply.model,
    content,
    stop_reason: reply.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: reply.usage.input,
      output_tokens: reply.usage.output,
      cache_creation_input_tokens: reply.usage.cacheWrite,
      cache_read_input_tokens: reply.usage.cacheRead,
    },
  };
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const DEFAULT_MESSAGES: Record<string, string> = {
  invalid_request_error: "invalid request",
  authentication_error: "invalid x-api-key",
  permission_error: "your API key does not have permission to use the specified resource",
  request_too_large: "request exceeds the maximum allowed number of bytes",
  rate_limit_error: "this request would exceed your organization's rate limit",
  api_error: "internal server error",
  timeout_error: "request timed out",
  overloaded_error: "overloaded",
};

export function anthropicErrorBody(status: number, message: string | undefined, model: string): unknown {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  const text =
    message ?? (type === "not_found_error" ? `model: ${model}` : (DEFAULT_MESSAGES[type] ?? "error"));
  return { type: "error", error: { type, message: text }, request_id: "req_mock" };
}
