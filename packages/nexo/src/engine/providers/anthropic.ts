/**
 * The Anthropic Messages API provider, over the official SDK with its own retries turned off so
 * that nexo's retry policy (retry.ts) is the only one: the SDK would otherwise retry silently,
 * and could not know that output has already reached a door.
 */
import type { ChatRequest, LlmProvider, ProviderEvent } from "../types.js";
import { toAnthropicParams } from "./anthropic-request.js";
import type { AnthropicMessagesClient, anthropicSdkErrors } from "./anthropic-sdk.js";
import { AnthropicStreamDecoder, anthropicEventReader } from "./anthropic-stream.js";
import { runAttempt } from "./attempt.js";
import { DEFAULT_TIMEOUT_MS } from "./attempt-guard.js";
import { contextWindow } from "./context-windows.js";
import { nodeFetch } from "./node-fetch.js";
import {
  DEFAULT_RETRY_POLICY,
  type RetryClock,
  type RetryPolicy,
  streamWithRetry,
  systemClock,
} from "./retry.js";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

export interface AnthropicProviderOptions {
  /** Registry name; defaults to "anthropic". */
  id?: string;
  apiKey?: string;
  /** With or without a trailing `/v1`. */
  baseUrl?: string;
  /** Used when a request names no model. */
  defaultModel?: string;
  /** Cache breakpoints on system prompt and tools (default on). */
  promptCaching?: boolean;
  timeoutMs?: number;
  /** 0 disables the idle check. */
  idleTimeoutMs?: number;
  headers?: Record<string, string>;
  /** Overrides the known context window of every model served here. */
  contextWindow?: number;
  retry?: RetryPolicy;
  clock?: RetryClock;
}

/** The SDK appends `/v1/messages` itself, so a `/v1` the operator wrote is taken off. */
export function anthropicBaseUrl(raw: string | undefined): string {
  const trimmed = (raw ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, "");
  return trimmed.replace(/\/v1$/, "");
}

export class AnthropicProvider implements LlmProvider {
  readonly id: string;
  readonly baseUrl: string;
  private client: Promise<AnthropicMessagesClient> | undefined;
  private sdk: typeof anthropicSdkErrors | undefined;
  private readonly policy: RetryPolicy;
  private readonly clock: RetryClock;

  constructor(private readonly options: AnthropicProviderOptions = {}) {
    this.id = options.id ?? "anthropic";
    this.baseUrl = anthropicBaseUrl(options.baseUrl);
    this.policy = options.retry ?? DEFAULT_RETRY_POLICY;
    this.clock = options.clock ?? systemClock;
  }

  /**
   * The SDK client, created on first use: loading the SDK is a large share of nexo's start-up
   * time, and a process that never talks to Anthropic should not pay for it. Without a key the
   * SDK would go looking for credentials in the environment and on disk; nexo's keys come from
   * llm.yaml only, so a missing key is reported when the provider is used.
   */
  private getClient(): Promise<AnthropicMessagesClient> | undefined {
    const { apiKey, timeoutMs, headers } = this.options;
    if (!apiKey) return undefined;
    this.client ??= import("./anthropic-sdk.js").then((sdk) => {
      this.sdk = sdk.anthropicSdkErrors;
      return new sdk.AnthropicMessagesClient({
        apiKey,
        baseURL: this.baseUrl,
        maxRetries: 0,
        timeout: timeoutMs ?? DEFAULT_TIMEOUT_MS,
        defaultHeaders: headers,
        logLevel: "off",
        fetch: nodeFetch,
      });
    });
    return this.client;
  }

  /** The SDK, once getClient() has loaded it (a response exists only after that). */
  private loadedSdk(): typeof anthropicSdkErrors {
    if (!this.sdk) throw new Error("the Anthropic SDK is used before it was loaded");
    return this.sdk;
  }

  contextWindow(model: string): number | undefined {
    return this.options.contextWindow ?? contextWindow(model || this.options.defaultModel || "");
  }

  stream(request: ChatRequest): AsyncIterable<ProviderEvent> {
    return streamWithRetry(() => this.attempt(request), {
      policy: this.policy,
      clock: this.clock,
      signal: request.signal,
    });
  }

  private attempt(request: ChatRequest): AsyncGenerator<ProviderEvent, void, undefined> {
    const promptCaching = this.options.promptCaching ?? true;
    return runAttempt({
      provider: this.id,
      baseUrl: this.baseUrl,
      client: this.getClient(),
      request,
      defaultModel: this.options.defaultModel,
      idleTimeoutMs: this.options.idleTimeoutMs,
      clock: this.clock,
      sdkErrors: () => (this.sdk ? [this.sdk] : []),
      // The SDK sends the request and throws for an HTTP failure; the body is read by runAttempt.
      open: (client, model, signal) =>
        client.messages.create(toAnthropicParams(request, model, { promptCaching }), { signal }).asResponse(),
      messages: (headers) => anthropicEventReader(headers, this.loadedSdk().APIError),
      decoder: () => new AnthropicStreamDecoder(this.id, this.baseUrl),
    });
  }
}
