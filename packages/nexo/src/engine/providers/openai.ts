import type OpenAI from "openai";
import type { ChatRequest, LlmProvider, ProviderEvent } from "../types.js";
import { runAttempt } from "./attempt.js";
import { DEFAULT_TIMEOUT_MS } from "./attempt-guard.js";
import { contextWindow } from "./context-windows.js";
import { nodeFetch } from "./node-fetch.js";
import { type OpenAiRequestOptions, toOpenAiParams } from "./openai-request.js";
import { OpenAiStreamDecoder, openAiChunkReader } from "./openai-stream.js";
import {
  DEFAULT_RETRY_POLICY,
  type RetryClock,
  type RetryPolicy,
  streamWithRetry,
  systemClock,
} from "./retry.js";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

export interface OpenAiProviderOptions {
  /** Registry name; defaults to the flavour. */
  id?: string;
  flavor?: "openai" | "openai_compatible";
  apiKey?: string;
  /** With or without a trailing `/v1`. */
  baseUrl?: string;
  defaultModel?: string;
  organization?: string;
  project?: string;
  maxTokensParam?: OpenAiRequestOptions["maxTokensParam"];
  /** Ask for the usage chunk (default on; turn off for servers that reject `stream_options`). */
  includeUsage?: boolean;
  timeoutMs?: number;
  /** 0 disables the idle check. */
  idleTimeoutMs?: number;
  headers?: Record<string, string>;
  contextWindow?: number;
  retry?: RetryPolicy;
  clock?: RetryClock;
}

/**
 * The SDK appends `/chat/completions` to its base URL, which must therefore end at the API root.
 * A bare host (`http://localhost:11434`) gets `/v1`; a URL with a path is the operator's choice
 * and is kept (`…/v1`, Gemini's `…/v1beta/openai`, OpenRouter's `…/api/v1`).
 */
export function openAiBaseUrl(raw: string | undefined): string {
  const trimmed = (raw ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, "");
  const path = new URL(trimmed).pathname;
  return path === "" || path === "/" ? `${trimmed}/v1` : trimmed;
}

export class OpenAiProvider implements LlmProvider {
  readonly id: string;
  readonly baseUrl: string;
  private readonly flavor: "openai" | "openai_compatible";
  private client: Promise<OpenAI> | undefined;
  private sdk: typeof import("openai") | undefined;
  private readonly policy: RetryPolicy;
  private readonly clock: RetryClock;

  constructor(private readonly options: OpenAiProviderOptions = {}) {
    this.flavor = options.flavor ?? "openai";
    this.id = options.id ?? this.flavor;
    this.baseUrl = openAiBaseUrl(options.baseUrl);
    this.policy = options.retry ?? DEFAULT_RETRY_POLICY;
    this.clock = options.clock ?? systemClock;
  }

  /** The SDK client, created on first use so that start-up never loads an SDK it will not use. */
  private getClient(): Promise<OpenAI> | undefined {
    const options = this.options;
    const keyless = !options.apiKey && this.flavor === "openai_compatible";
    if (!options.apiKey && !keyless) return undefined;
    this.client ??= import("openai").then((sdk) => {
      this.sdk = sdk;
      return new sdk.default({
        // The SDK insists on a key; for a keyless local server the Authorization header it
        // would build from it is removed again below, so nothing is sent.
        apiKey: options.apiKey || "unused",
        baseURL: this.baseUrl,
        organization: options.organization ?? null,
        project: options.project ?? null,
        maxRetries: 0,
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        defaultHeaders: { ...options.headers, ...(keyless ? { Authorization: null } : {}) },
        logLevel: "off",
        fetch: nodeFetch,
      });
    });
    return this.client;
  }

  /** The SDK, once getClient() has loaded it (a response exists only after that). */
  private loadedSdk(): typeof import("openai").default {
    if (!this.sdk) throw new Error("the OpenAI SDK is used before it was loaded");
    return this.sdk.default;
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
    const paramOptions = {
      maxTokensParam:
        this.options.maxTokensParam ?? (this.flavor === "openai" ? "max_completion_tokens" : "max_tokens"),
      includeUsage: this.options.includeUsage ?? true,
      reasoningEffort: this.flavor === "openai",
    } as const;
    return runAttempt({
      provider: this.id,
      baseUrl: this.baseUrl,
      client: this.getClient(),
      request,
      defaultModel: this.options.defaultModel,
      idleTimeoutMs: this.options.idleTimeoutMs,
      clock: this.clock,
      sdkErrors: () => (this.sdk ? [this.sdk.default] : []),
      // The SDK sends the request and throws for an HTTP failure; its stream helper is not used, it
      // copies its pending buffer once per event (sse.ts).
      open: (client, model, signal) =>
        client.chat.completions.create(toOpenAiParams(request, model, paramOptions), { signal }).asResponse(),
      messages: (headers) => openAiChunkReader(headers, this.loadedSdk().APIError),
      decoder: () => new OpenAiStreamDecoder(this.id, this.baseUrl),
    });
  }
}
