/**
 * Plugin LLM providers (plugin contract §5.y): one engine LlmProvider per
 * `[plugin.extends].llm_providers` name, registered into the ProviderRegistry under that name.
 * `stream()` sends `llm.chat` with `stream: true` and turns every `llm.chat.delta` into
 * ProviderEvents as it arrives (300 s bound), or — with `streaming: false` — one synchronous
 * `llm.chat` (60 s bound); NEXO_PLUGIN_LLM_TIMEOUT_MS overrides both.
 *
 * Errors follow the engine's provider contract: -33101..-33105 arrive as the typed LLM errors
 * of @nexo/wire; a plugin that times out, stops or is not running is an LlmConnectionError
 * (retryable); other error replies and malformed results are LlmProviderErrors.
 */
import {
  ConnectionClosedError,
  LlmConnectionError,
  LlmError,
  MethodNotFoundError,
  RequestCancelledError,
  RpcError,
  TimeoutError,
} from "@nexo/wire";
import type { plugin } from "@nexo/wire/schemas";
import { abortReason, LlmProviderError } from "../../engine/providers/errors.js";
import type { ProviderRegistry } from "../../engine/providers/registry.js";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../../engine/types.js";
import { type PluginCalls, pluginCalls } from "./calls.js";
import { PluginProtocolError, PluginUnavailableError } from "./errors.js";
import type { PluginHost } from "./host.js";
import { ChunkAssembler, chatParamsOf } from "./llm-mapping.js";
import { registerEach } from "./registration.js";

type LlmHost = Pick<PluginHost, "id" | "request" | "requestStream" | "timeouts">;

export interface PluginLlmProviderOptions {
  /** Use streamed `llm.chat` (default) or one synchronous call per request. */
  streaming?: boolean;
}

export class PluginLlmProvider implements LlmProvider {
  readonly id: string;
  private readonly host: LlmHost;
  private readonly streaming: boolean;
  private readonly calls: PluginCalls;

  constructor(host: LlmHost, name: string, options: PluginLlmProviderOptions = {}) {
    this.host = host;
    this.calls = pluginCalls(host);
    this.id = name;
    this.streaming = options.streaming ?? true;
  }

  stream(request: ChatRequest): AsyncIterable<ProviderEvent> {
    return this.streaming ? this.streamed(request) : this.synchronous(request);
  }

  private async *synchronous(request: ChatRequest): AsyncGenerator<ProviderEvent> {
    let result: plugin.LlmChatResult;
    try {
      result = await this.calls.request("llm.chat", chatParamsOf(this.id, request, false), {
        timeoutMs: this.host.timeouts.llm.chatMs,
        ...(request.signal ? { signal: request.signal } : {}),
      });
    } catch (error) {
      throw this.translate(error, request.signal);
    }
    yield* new ChunkAssembler(this.id).finish(result);
  }

  private async *streamed(request: ChatRequest): AsyncGenerator<ProviderEvent> {
    // Our own controller, so that a consumer who stops iterating also abandons the request.
    const controller = new AbortController();
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted) onAbort();
    const chunks = new ChunkChannel();
    const assembler = new ChunkAssembler(this.id);
    // Each delta and the final reply are checked against the contract by the caller.
    this.calls
      .requestStream("llm.chat", chatParamsOf(this.id, request, true), {
        deltaMethod: "llm.chat.delta",
        onDelta: (params) => chunks.push(params),
        timeoutMs: this.host.timeouts.llm.streamMs,
        signal: controller.signal,
      })
      .then(
        (reply) => chunks.end(reply),
        (error) => chunks.fail(error),
      );
    try {
      for (;;) {
        const next = await chunks.next();
        if (next.done) {
          yield* assembler.finish(next.reply);
          return;
        }
        for (const event of assembler.onChunk(next.params.chunk)) yield event;
      }
    } catch (error) {
      throw this.translate(error, request.signal);
    } finally {
      request.signal?.removeEventListener("abort", onAbort);
      controller.abort(new Error("stream closed by its consumer"));
    }
  }

  private translate(error: unknown, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted && (error instanceof RequestCancelledError || error === signal.reason)) {
      return abortReason(signal);
    }
    const data = { provider: this.id, plugin_id: this.host.id };
    if (error instanceof LlmError) return error;
    if (error instanceof MethodNotFoundError) {
      return new LlmProviderError(`${this.id}: plugin "${this.host.id}" does not implement llm.chat`, {
        ...data,
        retryable: false,
      });
    }
    if (error instanceof RpcError) {
      return new LlmProviderError(`${this.id}: ${error.message}`, {
        ...data,
        retryable: false,
        code: error.code,
      });
    }
    if (
      error instanceof TimeoutError ||
      error instanceof ConnectionClosedError ||
      error instanceof PluginUnavailableError
    ) {
      return new LlmConnectionError(`${this.id}: ${error.message}`, data);
    }
    if (error instanceof PluginProtocolError) {
      return new LlmProviderError(`${this.id}: ${error.message}`, { ...data, retryable: false });
    }
    return error;
  }
}

type ChunkItem =
  | { done: false; params: plugin.LlmChatDeltaParams }
  | { done: true; reply: plugin.LlmChatResult };

/**
 * Deltas arrive as callbacks and are consumed by an async generator. The buffer is bounded by
 * the one response in flight: deltas stop once the final reply has arrived.
 */
class ChunkChannel {
  private readonly items: ChunkItem[] = [];
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(params: plugin.LlmChatDeltaParams): void {
    this.items.push({ done: false, params });
    this.notify();
  }

  end(reply: plugin.LlmChatResult): void {
    this.items.push({ done: true, reply });
    this.notify();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.notify();
  }

  async next(): Promise<ChunkItem> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) return item;
      if (this.failure !== undefined) throw this.failure.error;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** Registers a provider per `[plugin.extends].llm_providers` name. Returns a function that removes them. */
export function registerPluginLlmProviders(
  host: LlmHost & Pick<PluginHost, "manifest">,
  registry: ProviderRegistry,
  options: PluginLlmProviderOptions = {},
): () => void {
  return registerEach(host.manifest.manifest.plugin.extends?.llm_providers ?? [], (name) =>
    registry.register(new PluginLlmProvider(host, name, options)),
  );
}
