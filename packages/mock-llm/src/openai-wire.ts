/**
 * OpenAI Chat Completions wire format, as the API sends it: SSE `data:` lines each holding a
 * `chat.completion.chunk` (a role chunk, content and `reasoning_content` deltas, tool calls as
 * fragments keyed by index, a chunk with the finish reason, then the usage chunk when
 * `stream_options.include_usage` was asked for) and a final `data: [DONE]`; or one
 * `chat.completion` when `stream` is false; errors as `{error:{message, type, param, code}}`.
 */
import { openString } from "./json-template.js";
import type { ResolvedReply } from "./reply.js";
import { splitJson, splitText, splitTextJson } from "./reply.js";

const FINISH: Record<ResolvedReply["stopReason"], string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter",
};

function usageOf(reply: ResolvedReply): unknown {
  const prompt = reply.usage.input + reply.usage.cacheRead;
  return {
    prompt_tokens: prompt,
    completion_tokens: reply.usage.output,
    total_tokens: prompt + reply.usage.output,
    prompt_tokens_details: { cached_tokens: reply.usage.cacheRead },
  };
}

export function openAiStreamEvents(reply: ResolvedReply, includeUsage: boolean, created: number): string[] {
  const envelope = (delta: unknown, finish: string | null = null) => ({
    id: reply.id,
    object: "chat.completion.chunk",
    created,
    model: reply.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify(envelope(delta, finish))}\n\n`;
  const events = [chunk({ role: "assistant", content: "" })];
  /** One chunk per piece of `text` in `delta[key]`, written from the envelope's template (json-template.ts). */
  const deltas = (key: string, text: string) => {
    const template = openString((mark) => envelope({ [key]: mark }));
    if (template === undefined) {
      for (const piece of splitText(text)) events.push(chunk({ [key]: piece }));
      return;
    }
    const before = `data: ${template.head}`;
    const after = `${template.tail}\n\n`;
    for (const piece of splitTextJson(text)) events.push(before + piece + after);
  };
  if (reply.thinking !== undefined) deltas("reasoning_content", reply.thinking);
  deltas("content", reply.text);
  reply.toolCalls.forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const piece of splitJson(JSON.stringify(call.input))) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  events.push(chunk({}, FINISH[reply.stopReason]));
  if (includeUsage) {
    events.push(
      `data: ${JSON.stringify({
        id: reply.id,
        object: "chat.completion.chunk",
        created,
        model: reply.model,
        choices: [],
        usage: usageOf(reply),
      })}\n\n`,
    );
  }
  events.push("data: [DONE]\n\n");
  return events;
}

export function openAiCompletion(reply: ResolvedReply, created: number): unknown {
  const message: Record<string, unknown> = {
    role: "assistant",
    content: reply.text === "" ? null : reply.text,
  };
  if (reply.thinking !== undefined) message.reasoning_content = reply.thinking;
  if (reply.toolCalls.length > 0) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.input) },
    }));
  }
  return {
    id: reply.id,
    object: "chat.completion",
    created,
    model: reply.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: FINISH[reply.stopReason] }],
    usage: usageOf(reply),
  };
}

export function openAiErrorBody(status: number, message: string | undefined, model: string): unknown {
  const [type, code, fallback] =
    status === 401
      ? ["invalid_request_error", "invalid_api_key", "Incorrect API key provided"]
      : status === 403
        ? ["invalid_request_error", "unsupported_country_region_territory", "Permission denied"]
        : status === 404
          ? [
              "invalid_request_error",
              "model_not_found",
              `The model \`${model}\` does not exist or you do not have access to it.`,
            ]
          : status === 429
            ? ["requests", "rate_limit_exceeded", "Rate limit reached for requests"]
            : status >= 500
              ? ["server_error", null, "The server had an error while processing your request."]
              : ["invalid_request_error", null, "Invalid request"];
  return { error: { message: message ?? fallback, type, param: null, code } };
}
