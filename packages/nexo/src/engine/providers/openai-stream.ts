/**
 * OpenAI Chat Completions stream chunks → nexo's ProviderEvents.
 *
 * Text (`delta.content`) and reasoning (`delta.reasoning_content` from DeepSeek and vLLM,
 * `delta.reasoning` from Ollama and OpenRouter) are forwarded as they arrive. Tool calls arrive
 * as fragments keyed by `index` (id and name first, then pieces of the arguments); each piece is
 * forwarded as `tool_call_delta` (numbered per call, as an index may be reused) and the calls are
 * assembled and emitted when the stream ends, together with the usage chunk that
 * `stream_options.include_usage` adds after the finish reason. A stream with no finish reason
 * was cut off.
 */
import { randomUUID } from "node:crypto";
import { LlmConnectionError } from "@nexo/wire";
import type OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { ProviderEvent, StopReason, Usage } from "../types.js";
import type { SseMessage, SseReader, TextFrame } from "./sse.js";
import { openAiTextField, TextChunks } from "./text-chunks.js";
import { parseToolArguments } from "./tool-arguments.js";

interface PendingCall {
  /** The call's position in the response (an `index` may be reused by a later call). */
  seq: number;
  id: string | undefined;
  name: string;
  args: string;
}

export function mapOpenAiFinishReason(reason: string): StopReason {
  switch (reason) {
    case "stop":
      return "end_turn";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "other";
  }
}

/** Usage as OpenAI reports it → nexo's, where `inputTokens` excludes cache reads as Anthropic's does. */
export function mapOpenAiUsage(raw: Record<string, unknown>): Partial<Usage> {
  const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const details = raw.prompt_tokens_details as Record<string, unknown> | null | undefined;
  // DeepSeek reports cache hits in its own field.
  const cached = num(details?.cached_tokens) || num(raw.prompt_cache_hit_tokens);
  return {
    inputTokens: Math.max(0, num(raw.prompt_tokens) - cached),
    outputTokens: num(raw.completion_tokens),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
}

/** The SDK's APIError class (the SDK itself is loaded only when a provider first sends). */
type OpenAiApiError = typeof OpenAI.APIError;

/**
 * A stream chunk as the reader hands it on: the parsed chunk, or — for a chunk whose only effect
 * is a piece of text (read by text-chunks.ts) — that text alone.
 */
export type OpenAiChunk = ChatCompletionChunk | string;

/**
 * The reader of one Chat Completions stream's SSE messages, as the SDK's stream helper reads
 * them: each `data:` is a chunk, `[DONE]` ends the stream (anything after it is ignored), a chunk
 * with an `error` is the vendor's error sent mid-stream, and Assistants' `thread.*` events are
 * not chunks. Text chunks in the envelope of an earlier one are read without JSON.parse, and its
 * frame is that envelope's message until `[DONE]`.
 */
export function openAiChunkReader(headers: Headers, APIError: OpenAiApiError): SseReader<OpenAiChunk> {
  let done = false;
  const texts = new TextChunks(openAiTextField);
  let frame: TextFrame | undefined;
  const read = (message: SseMessage): OpenAiChunk | undefined => {
    if (done) return undefined;
    const data = message.data;
    if (data.startsWith("[DONE]")) {
      done = true;
      return undefined;
    }
    if (message.event?.startsWith("thread.")) return undefined;
    const text = texts.text(data);
    if (text !== undefined) return text;
    const chunk = JSON.parse(data) as ChatCompletionChunk & { error?: object };
    if (chunk?.error) throw new APIError(undefined, chunk.error, undefined, headers);
    if (texts.learn(data, chunk)) frame = texts.frame(message.event);
    return chunk;
  };
  return Object.assign(read, { frame: () => (done ? undefined : frame) });
}

export class OpenAiStreamDecoder {
  private readonly open = new Map<number, PendingCall>();
  private readonly closed: PendingCall[] = [];
  private calls = 0;
  private finishReason: string | undefined;
  private usage: Partial<Usage> | undefined;

  constructor(
    private readonly provider: string,
    private readonly baseUrl: string,
  ) {}

  push(chunk: OpenAiChunk): ProviderEvent[] {
    if (typeof chunk === "string") return chunk === "" ? [] : [{ type: "text_delta", text: chunk }];
    const out: ProviderEvent[] = [];
    if (chunk.usage) this.usage = mapOpenAiUsage(chunk.usage as unknown as Record<string, unknown>);
    const choice = chunk.choices?.[0];
    if (!choice) return out;
    const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & {
      reasoning_content?: unknown;
      reasoning?: unknown;
    };
    const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "")
      out.push({ type: "thinking_delta", text: reasoning });
    if (typeof delta.content === "string" && delta.content !== "")
      out.push({ type: "text_delta", text: delta.content });
    for (const [position, fragment] of (delta.tool_calls ?? []).entries()) {
      const piece = this.addFragment(fragment, position);
      if (piece) out.push(piece);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  /** The tool calls, usage and stop reason, once the stream has ended; throws if it was cut off. */
  finish(): ProviderEvent[] {
    if (this.finishReason === undefined) {
      throw new LlmConnectionError(
        `${this.provider}: the stream from ${this.baseUrl} ended before the response was complete`,
        { provider: this.provider, reason: "stream_truncated" },
      );
    }
    const calls = [...this.closed, ...[...this.open.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c)];
    const out: ProviderEvent[] = calls.map((call) => ({
      type: "tool_call",
      id: call.id ?? `call_${randomUUID()}`,
      name: call.name,
      input: parseToolArguments(call.args, call.name, this.provider),
      index: call.seq,
    }));
    if (this.usage) out.push({ type: "usage", usage: this.usage });
    // Some compatible servers finish a tool-calling response with "stop".
    const reason = calls.length > 0 ? "tool_use" : mapOpenAiFinishReason(this.finishReason);
    out.push({ type: "stop", reason });
    return out;
  }

  /** Adds a fragment to its call; returns the argument piece to forward, if it has one. */
  private addFragment(
    fragment: ChatCompletionChunk.Choice.Delta.ToolCall,
    position: number,
  ): ProviderEvent | undefined {
    const index = typeof fragment.index === "number" ? fragment.index : position;
    let call = this.open.get(index);
    // A server that reuses an index for a new call (a different id) has finished the old one.
    if (call && fragment.id && call.id && fragment.id !== call.id) {
      this.closed.push(call);
      call = undefined;
    }
    if (!call) {
      call = { seq: this.calls++, id: undefined, name: "", args: "" };
      this.open.set(index, call);
    }
    if (fragment.id) call.id = fragment.id;
    if (fragment.function?.name && call.name === "") call.name = fragment.function.name;
    const piece = fragment.function?.arguments;
    if (!piece) return undefined;
    call.args += piece;
    return {
      type: "tool_call_delta",
      index: call.seq,
      ...(call.id === undefined ? {} : { id: call.id }),
      ...(call.name === "" ? {} : { name: call.name }),
      delta: piece,
    };
  }
}
