/**
 * Anthropic's raw stream events → nexo's ProviderEvents.
 *
 * Text and thinking are forwarded as they arrive; a tool call's `input_json_delta` fragments are
 * forwarded as `tool_call_delta` (keyed by the block's index) and joined and parsed once its block
 * stops (several tool_use blocks in one
 * response each become one `tool_call`). Usage is split across `message_start` (input and cache
 * counts) and `message_delta` (cumulative output), so it is emitted once, complete, just before
 * `stop`. A stream that ends without `message_stop` was cut off.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type {
  StopReason as AnthropicStopReason,
  RawMessageStreamEvent,
} from "@anthropic-ai/sdk/resources/messages";
import { LlmConnectionError } from "@nexo/wire";
import type { ProviderEvent, StopReason, Usage } from "../types.js";
import type { SseMessage, SseReader, TextFrame } from "./sse.js";
import { anthropicTextField, TextChunks } from "./text-chunks.js";
import { parseToolArguments } from "./tool-arguments.js";

/** Blocks and deltas read field by field, so kinds this SDK version does not know are skipped, not rejected. */
type LooseBlock = { type: string } & Record<string, unknown>;

type OpenBlock =
  | { kind: "text" | "thinking" | "other" }
  | { kind: "tool_use"; id: string; name: string; json: string; initial: Record<string, unknown> };

export function mapAnthropicStopReason(reason: AnthropicStopReason | null | undefined): StopReason {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "refusal":
      return reason;
    case "model_context_window_exceeded":
      return "max_tokens";
    default:
      return "other";
  }
}

/** The SDK's APIError class (the SDK itself is loaded only when a provider first sends). */
type AnthropicApiError = typeof Anthropic.APIError;

/** A stream event as the reader hands it on: the parsed event, or a text delta's text alone. */
export type AnthropicChunk = RawMessageStreamEvent | string;

/**
 * The reader of one Messages stream's SSE messages, as the SDK's stream helper reads them: `ping`
 * and nameless messages carry nothing, `event: error` is the vendor's error sent mid-stream. Text
 * deltas in the envelope of an earlier one are read without JSON.parse (text-chunks.ts).
 */
export function anthropicEventReader(
  headers: Headers,
  APIError: AnthropicApiError,
): SseReader<AnthropicChunk> {
  const texts = new TextChunks(anthropicTextField);
  let frame: TextFrame | undefined;
  const read = (message: SseMessage): AnthropicChunk | undefined => {
    if (message.event === null || message.event === "ping") return undefined;
    if (message.event === "error") {
      let body: object = new String(message.data);
      try {
        const parsed: unknown = JSON.parse(message.data);
        if (parsed !== null && typeof parsed === "object") body = parsed;
      } catch {
        // Not JSON: the raw text is the error's body.
      }
      const type = (body as { error?: { type?: unknown } }).error?.type;
      const errorType =
        typeof type === "string" ? (type as ConstructorParameters<AnthropicApiError>[4]) : undefined;
      throw new APIError(undefined, body, undefined, headers, errorType);
    }
    const data = message.data;
    if (data === "") return undefined;
    const text = texts.text(data);
    if (text !== undefined) return text;
    const event = JSON.parse(data) as RawMessageStreamEvent;
    if (texts.learn(data, event)) frame = texts.frame(message.event);
    return event;
  };
  return Object.assign(read, { frame: () => frame });
}

export class AnthropicStreamDecoder {
  private readonly blocks = new Map<number, OpenBlock>();
  private readonly usage: Usage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  private stopReason: StopReason = "other";
  private complete = false;

  constructor(
    private readonly provider: string,
    private readonly baseUrl: string,
  ) {}

  push(event: AnthropicChunk): ProviderEvent[] {
    if (typeof event === "string") return event === "" ? [] : [{ type: "text_delta", text: event }];
    switch (event.type) {
      case "message_start": {
        const u = event.message.usage;
        this.usage.inputTokens = u.input_tokens ?? 0;
        this.usage.outputTokens = u.output_tokens ?? 0;
        this.usage.cacheReadTokens = u.cache_read_input_tokens ?? 0;
        this.usage.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
        return [];
      }
      case "content_block_start":
        return this.startBlock(event.index, event.content_block as unknown as LooseBlock);
      case "content_block_delta":
        return this.delta(event.index, event.delta as unknown as LooseBlock);
      case "content_block_stop":
        return this.stopBlock(event.index);
      case "message_delta": {
        this.stopReason = mapAnthropicStopReason(event.delta.stop_reason);
        const u = event.usage;
        if (typeof u.output_tokens === "number") this.usage.outputTokens = u.output_tokens;
        if (typeof u.input_tokens === "number") this.usage.inputTokens = u.input_tokens;
        if (typeof u.cache_read_input_tokens === "number")
          this.usage.cacheReadTokens = u.cache_read_input_tokens;
        if (typeof u.cache_creation_input_tokens === "number")
          this.usage.cacheWriteTokens = u.cache_creation_input_tokens;
        return [];
      }
      case "message_stop":
        this.complete = true;
        return [
          { type: "usage", usage: { ...this.usage } },
          { type: "stop", reason: this.stopReason },
        ];
      default:
        return [];
    }
  }

  /**
   * Throws when the stream ended before the response was complete. Anthropic's stream has said
   * everything by then, so there are no events left to return (OpenAI's decoder has some).
   */
  finish(): ProviderEvent[] {
    if (!this.complete) {
      throw new LlmConnectionError(
        `${this.provider}: the stream from ${this.baseUrl} ended before the response was complete`,
        { provider: this.provider, reason: "stream_truncated" },
      );
    }
    return [];
  }

  private startBlock(index: number, block: LooseBlock): ProviderEvent[] {
    switch (block.type) {
      case "text": {
        this.blocks.set(index, { kind: "text" });
        const text = typeof block.text === "string" ? block.text : "";
        return text ? [{ type: "text_delta", text }] : [];
      }
      case "thinking": {
        this.blocks.set(index, { kind: "thinking" });
        const text = typeof block.thinking === "string" ? block.thinking : "";
        return text ? [{ type: "thinking_delta", text }] : [];
      }
      case "tool_use": {
        const initial =
          block.input !== null && typeof block.input === "object" && !Array.isArray(block.input)
            ? (block.input as Record<string, unknown>)
            : {};
        this.blocks.set(index, {
          kind: "tool_use",
          id: String(block.id),
          name: String(block.name),
          json: "",
          initial,
        });
        return [];
      }
      default:
        // redacted_thinking and server-side tool blocks have no canonical form; they are skipped.
        this.blocks.set(index, { kind: "other" });
        return [];
    }
  }

  private delta(index: number, delta: LooseBlock): ProviderEvent[] {
    const block = this.blocks.get(index);
    switch (delta.type) {
      case "text_delta":
        return typeof delta.text === "string" && delta.text ? [{ type: "text_delta", text: delta.text }] : [];
      case "thinking_delta":
        return typeof delta.thinking === "string" && delta.thinking
          ? [{ type: "thinking_delta", text: delta.thinking }]
          : [];
      case "signature_delta":
        return typeof delta.signature === "string"
          ? [{ type: "thinking_delta", text: "", signature: delta.signature }]
          : [];
      case "input_json_delta":
        if (block?.kind !== "tool_use" || typeof delta.partial_json !== "string" || !delta.partial_json)
          return [];
        block.json += delta.partial_json;
        return [
          { type: "tool_call_delta", index, id: block.id, name: block.name, delta: delta.partial_json },
        ];
      default:
        return [];
    }
  }

  private stopBlock(index: number): ProviderEvent[] {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (block?.kind !== "tool_use") return [];
    const input =
      block.json.trim() === "" ? block.initial : parseToolArguments(block.json, block.name, this.provider);
    return [{ type: "tool_call", id: block.id, name: block.name, input, index }];
  }
}
