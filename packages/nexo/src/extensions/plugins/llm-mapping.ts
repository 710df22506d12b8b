/**
 * Translation between the engine's LLM vocabulary (engine/types.ts) and the `llm.chat` wire
 * shapes of plugin contract §5.y: the request going out, and the result and every
 * `llm.chat.delta` chunk type coming back as ProviderEvents.
 *
 *   text_delta            → text_delta
 *   tool_call_start/_args_delta/_end → one complete tool_call (arguments assembled, then parsed)
 *   usage                 → usage (input/output tokens)
 *   end                   → stop (stop→end_turn, length→max_tokens, tool_use→tool_use, other→other)
 *
 * The final `llm.chat` result fills in what the deltas did not carry (usage, the stop reason,
 * tool calls only listed there, text when nothing was streamed) and adds `cache_usage`.
 */
import * as plugin from "@nexo/wire/schemas/plugin";
import { parseToolArguments } from "../../engine/providers/tool-arguments.js";
import type { ChatRequest, ProviderEvent, StopReason } from "../../engine/types.js";
import { PluginProtocolError } from "./errors.js";

/** Sent when the engine leaves the temperature to the provider; §5.3's default. */
export const DEFAULT_TEMPERATURE = plugin.LLM_COMPLETE_DEFAULT_TEMPERATURE;

export function chatParamsOf(provider: string, request: ChatRequest, stream: boolean): plugin.LlmChatParams {
  return {
    provider,
    model: request.model,
    stream,
    request: {
      model: request.model,
      messages: request.messages.flatMap(wireMessagesOf),
      max_tokens: request.maxTokens,
      temperature: request.temperature ?? DEFAULT_TEMPERATURE,
      ...(request.system === undefined ? {} : { system_prompt: request.system }),
      ...(request.tools === undefined || request.tools.length === 0
        ? {}
        : {
            tools: request.tools.map((tool) => ({
              name: tool.name,
              description: tool.description,
              parameters: tool.inputSchema,
            })),
          }),
    },
  };
}

/**
 * One engine message as wire messages: a user message's tool results become `tool` messages
 * (paired by `tool_call_id`), its text and images one `user` message; an assistant message keeps
 * its text and tool calls. Thinking is the provider's own business and is not sent.
 */
function wireMessagesOf(message: ChatRequest["messages"][number]): plugin.LlmChatMessage[] {
  const out: plugin.LlmChatMessage[] = [];
  const texts: string[] = [];
  const attachments: plugin.LlmAttachment[] = [];
  const toolCalls: plugin.LlmToolCall[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "image":
        attachments.push({
          kind: "image",
          mime_type: block.mediaType,
          data_kind: "base64",
          base64: block.data,
        });
        break;
      case "tool_use":
        toolCalls.push({ id: block.id, name: block.name, arguments: block.input });
        break;
      case "tool_result":
        out.push({
          role: "tool",
          content: block.isError ? `[tool error] ${block.content}` : block.content,
          tool_call_id: block.toolUseId,
        });
        break;
      case "thinking":
        break;
    }
  }
  if (texts.length > 0 || attachments.length > 0 || toolCalls.length > 0) {
    out.push({
      role: message.role,
      content: texts.join("\n"),
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    });
  }
  return out;
}

export function stopReasonOf(finish: plugin.LlmFinishReason): StopReason {
  switch (finish.kind) {
    case "stop":
      return "end_turn";
    case "length":
      return "max_tokens";
    case "tool_use":
      return "tool_use";
    case "other":
      return "other";
  }
}

/** Turns a stream of chunks, then the final result, into ProviderEvents. One per request. */
export class ChunkAssembler {
  private readonly provider: string;
  private readonly calls = new Map<string, { name: string; args: string }>();
  private readonly emittedCalls = new Set<string>();
  private sawText = false;
  private sawUsage = false;
  private sawStop = false;

  constructor(provider: string) {
    this.provider = provider;
  }

  onChunk(chunk: plugin.LlmChatChunk): ProviderEvent[] {
    switch (chunk.type) {
      case "text_delta":
        if (chunk.delta === "") return [];
        this.sawText = true;
        return [{ type: "text_delta", text: chunk.delta }];
      case "tool_call_start":
        this.calls.set(chunk.id, { name: chunk.name, args: "" });
        return [];
      case "tool_call_args_delta": {
        const call = this.calls.get(chunk.id);
        if (call === undefined)
          throw new PluginProtocolError(
            "llm.chat.delta",
            `arguments for tool call "${chunk.id}", which never started`,
          );
        call.args += chunk.delta;
        return [];
      }
      case "tool_call_end":
        return this.completeCall(chunk.id);
      case "usage":
        this.sawUsage = true;
        return [
          {
            type: "usage",
            usage: { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens },
          },
        ];
      case "end":
        this.sawStop = true;
        return [{ type: "stop", reason: stopReasonOf(chunk.finish_reason) }];
    }
  }

  /** What the final result adds; the stop event always comes last. */
  finish(result: plugin.LlmChatResult): ProviderEvent[] {
    const events: ProviderEvent[] = [];
    // Calls that started but never ended are still calls the model made.
    for (const id of [...this.calls.keys()]) events.push(...this.completeCall(id));
    if (result.content.type === "text") {
      if (!this.sawText && result.content.text !== "")
        events.push({ type: "text_delta", text: result.content.text });
    } else {
      for (const call of result.content.tool_calls) {
        if (this.emittedCalls.has(call.id)) continue;
        this.emittedCalls.add(call.id);
        events.push({
          type: "tool_call",
          id: call.id,
          name: call.name,
          input: this.argumentsOf(call.arguments, call.name),
        });
      }
    }
    if (!this.sawUsage) {
      events.push({
        type: "usage",
        usage: { inputTokens: result.usage.prompt_tokens, outputTokens: result.usage.completion_tokens },
      });
    }
    if (result.cache_usage !== undefined) {
      events.push({
        type: "usage",
        usage: {
          cacheReadTokens: result.cache_usage.cache_read_input_tokens,
          cacheWriteTokens: result.cache_usage.cache_creation_input_tokens,
        },
      });
    }
    if (!this.sawStop) events.push({ type: "stop", reason: stopReasonOf(result.finish_reason) });
    return events;
  }

  private completeCall(id: string): ProviderEvent[] {
    const call = this.calls.get(id);
    if (call === undefined)
      throw new PluginProtocolError("llm.chat.delta", `end of tool call "${id}", which never started`);
    this.calls.delete(id);
    this.emittedCalls.add(id);
    return [
      {
        type: "tool_call",
        id,
        name: call.name,
        input: parseToolArguments(call.args, call.name, this.provider),
      },
    ];
  }

  /** Result tool calls carry `arguments` as an object, or as JSON text from some plugins. */
  private argumentsOf(value: unknown, toolName: string): Record<string, unknown> {
    if (value === undefined || value === null) return {};
    if (typeof value === "string") return parseToolArguments(value, toolName, this.provider);
    if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
    return parseToolArguments(JSON.stringify(value), toolName, this.provider);
  }
}
