/**
 * Turning whatever a vendor SDK or the network throws into the typed LLM errors of @nexo/wire.
 *
 * Both official SDKs throw an `APIError` carrying the HTTP status, the response headers and the
 * parsed error body; errors that arrive inside an SSE stream carry only the body's error `type`
 * (Anthropic) or `code` (OpenAI), so those are translated to the status they stand for and go
 * through the same table. The decision is made on status and vendor codes first and on message
 * wording only where vendors give nothing better (context overflow, some "model not found"s).
 */
import type Anthropic from "@anthropic-ai/sdk";
import {
  JsonRpcCode,
  LlmAuthenticationError,
  LlmConnectionError,
  LlmContextOverflowError,
  LlmError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
  RpcError,
} from "@nexo/wire";
import type OpenAI from "openai";
import { scrubSecrets } from "../../store/redact.js";

/**
 * A provider failure that is none of the five contract errors: a 5xx or overload (retryable), a
 * request the vendor rejected (4xx), or a response nexo cannot use (a malformed stream, tool
 * arguments that are not JSON). Its code is -32603, which the plugin contract uses for "the chat
 * call returned an error".
 */
export class LlmProviderError extends LlmError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterSecs: number | undefined;
  constructor(
    message: string,
    data: { provider: string; retryable: boolean; status?: number; retry_after_secs?: number } & Record<
      string,
      unknown
    >,
  ) {
    super(JsonRpcCode.internalError, message, data);
    this.name = "LlmProviderError";
    this.status = data.status;
    this.retryable = data.retryable;
    this.retryAfterSecs = data.retry_after_secs;
  }
}

/** A provider name that nothing registered (a typo in agents.yaml, or a plugin that is not running). */
export class UnknownProviderError extends RpcError {
  readonly provider: string;
  constructor(provider: string, known: readonly string[]) {
    super(
      JsonRpcCode.internalError,
      `unknown LLM provider "${provider}"; configured providers: ${known.length ? known.join(", ") : "(none)"}`,
      { provider, known: [...known] },
    );
    this.name = "UnknownProviderError";
    this.provider = provider;
  }
}

/** A second provider under a name that is taken (two plugins, or a plugin shadowing llm.yaml). */
export class DuplicateProviderError extends RpcError {
  readonly provider: string;
  constructor(provider: string) {
    super(JsonRpcCode.internalError, `an LLM provider named "${provider}" is already registered`, {
      provider,
    });
    this.name = "DuplicateProviderError";
    this.provider = provider;
  }
}

/** What the mapper needs to write messages an operator can act on. */
export interface ErrorContext {
  provider: string;
  baseUrl: string;
  model: string;
  /** Clock for `retry-after` HTTP dates. */
  now?: () => number;
}

/** Anthropic error `type`s (HTTP bodies and mid-stream `event: error`) and the status each stands for. */
const ANTHROPIC_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** OpenAI (and compatible) error `code`s that name a status, for errors delivered inside a stream. */
const OPENAI_CODE_STATUS: Record<string, number> = {
  invalid_api_key: 401,
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  model_not_found: 404,
  context_length_exceeded: 400,
  server_error: 500,
};

/**
 * The wordings vendors use when the prompt does not fit: Anthropic ("prompt is too long",
 * "input length and `max_tokens` exceed context limit"), OpenAI/DeepSeek/vLLM ("maximum context
 * length is"), llama.cpp ("exceeds the available context size"), Gemini ("input token count …
 * exceeds the maximum number of tokens"), Groq ("reduce the length of the messages"), and the
 * generic "context window" phrasing several proxies use.
 */
const CONTEXT_OVERFLOW =
  /prompt is too long|exceed(?:s|ed)? (?:the )?(?:available )?context|context (?:length|limit|size|window)|maximum context length|context_length_exceeded|exceeds the maximum number of tokens|reduce the length of the messages|too many (?:input )?tokens|longer than the (?:model's )?(?:maximum )?(?:context|model) length/i;

const MODEL_MISSING = /model[^.]*?(?:not found|does not exist|not exist)|no such model|model_not_found/i;

/** Network error codes (Node, undici) that mean the connection failed or broke. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

interface HttpFailure {
  status: number | undefined;
  headers: Headers | undefined;
  /** The vendor's own words, without status prefixes or JSON dumps. */
  message: string;
  /** Anthropic's error `type` or OpenAI's `code`/`type`. */
  vendorCode: string | undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Reads status, headers and the vendor's message out of either SDK's APIError. */
function httpFailure(
  error: InstanceType<typeof Anthropic.APIError> | InstanceType<typeof OpenAI.APIError>,
): HttpFailure {
  const body = asRecord(error.error);
  // Anthropic keeps the whole body ({type:"error", error:{type, message}}); OpenAI keeps body.error.
  const inner = asRecord(body?.error) ?? body;
  const message = stringOf(inner?.message) ?? stringOf(body?.message) ?? error.message;
  const vendorCode =
    stringOf(inner?.code) ?? stringOf(inner?.type) ?? stringOf((error as { type?: unknown }).type);
  let status = error.status;
  if (status === undefined && vendorCode !== undefined) {
    status = ANTHROPIC_TYPE_STATUS[vendorCode] ?? OPENAI_CODE_STATUS[vendorCode];
  }
  return { status, headers: error.headers, message, vendorCode };
}

/**
 * Seconds to wait according to `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP
 * date, RFC 9110 §10.2.3). Undefined when absent or unreadable.
 */
export function retryAfterSecsFromHeaders(
  headers: Pick<Headers, "get"> | undefined,
  now: () => number = Date.now,
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value / 1000;
  }
  const raw = headers.get("retry-after");
  if (raw === null || raw.trim() === "") return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now()) / 1000);
}

function networkCode(error: unknown): string | undefined {
  // undici nests the socket error: TypeError("fetch failed" | "terminated") → cause → {code}.
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = asRecord(current)?.code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isBrokenStream(error: unknown): boolean {
  if (networkCode(error) !== undefined) return true;
  return error instanceof TypeError && /^(terminated|fetch failed)$/i.test(error.message);
}

function mapHttpFailure(failure: HttpFailure, ctx: ErrorContext): LlmError {
  const { status, message, vendorCode } = failure;
  const where = `${ctx.provider} (${ctx.baseUrl})`;
  const http = status === undefined ? "" : ` (HTTP ${status})`;
  const data = { provider: ctx.provider, ...(status === undefined ? {} : { status }) };
  const retryAfter = retryAfterSecsFromHeaders(failure.headers, ctx.now);
  const retryData = retryAfter === undefined ? {} : { retry_after_secs: retryAfter };

  if (status === 401 || status === 403) {
    return new LlmAuthenticationError(`${where} rejected the credentials${http}: ${message}`, data);
  }
  if (status === 429) {
    // A spent quota is reported as 429 but waiting does not fix it.
    const quota = vendorCode === "insufficient_quota" ? { quota_exhausted: true } : {};
    return new LlmRateLimitedError(`${where} is rate limiting requests${http}: ${message}`, {
      ...data,
      ...retryData,
      ...quota,
    });
  }
  if (status === 404 || vendorCode === "model_not_found" || (status === 400 && MODEL_MISSING.test(message))) {
    return new LlmModelNotFoundError(
      `model "${ctx.model}" was not found by ${where}${http}: ${message}` +
        (status === 404 ? " (check the model name, and that base_url points at the API root)" : ""),
      { ...data, model: ctx.model },
    );
  }
  if (
    (status === 400 || status === 413 || status === 422 || status === undefined) &&
    (vendorCode === "context_length_exceeded" ||
      vendorCode === "request_too_large" ||
      CONTEXT_OVERFLOW.test(message))
  ) {
    return new LlmContextOverflowError(
      `the conversation does not fit the context of "${ctx.model}"${http}: ${message}`,
      {
        ...data,
        model: ctx.model,
      },
    );
  }
  if (status === undefined || status >= 500 || status === 408) {
    return new LlmProviderError(`${where} failed${http}: ${message}`, {
      ...data,
      ...retryData,
      retryable: true,
    });
  }
  return new LlmProviderError(`${where} rejected the request${http}: ${message}`, {
    ...data,
    retryable: false,
  });
}

/**
 * The error classes of the vendor SDK a provider uses. The SDKs are loaded only when a provider
 * first makes a request (they cost a good part of start-up time), so the provider passes its
 * SDK's classes in rather than this module importing both.
 */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

/**
 * The typed error for anything a provider attempt threw. Errors that are already typed pass
 * through; errors that are neither the SDK's nor the network's (a bug in nexo) are returned
 * unchanged so they are not mistaken for a flaky provider. Aborts by the caller are the caller's
 * business and must be handled before calling this.
 */
export function toLlmError(error: unknown, ctx: ErrorContext, sdks: readonly SdkErrorClasses[]): unknown {
  return scrubbed(mapError(error, ctx, sdks));
}

/**
 * Vendors and proxies may echo what they were sent — the key included — in their error text, and
 * that text goes on to logs, transcripts and doors' `error` events. Every error leaving a provider
 * attempt passes here, so its message and stack are scrubbed once, at the source.
 */
function scrubbed(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const message = scrubSecrets(error.message);
  if (message !== error.message) error.message = message;
  if (error.stack !== undefined) error.stack = scrubSecrets(error.stack);
  return error;
}

function mapError(error: unknown, ctx: ErrorContext, sdks: readonly SdkErrorClasses[]): unknown {
  const isA = (kind: keyof SdkErrorClasses) => sdks.some((sdk) => error instanceof sdk[kind]);
  if (error instanceof RpcError) return error;
  if (isA("APIConnectionTimeoutError")) {
    return new LlmConnectionError(`${ctx.provider}: request to ${ctx.baseUrl} timed out`, {
      provider: ctx.provider,
      reason: "timeout",
    });
  }
  if (isA("APIConnectionError")) {
    const code = networkCode(error);
    const cause = (error as { cause?: unknown }).cause;
    const detail = code ?? (cause instanceof Error ? cause.message : (error as Error).message);
    return new LlmConnectionError(`${ctx.provider}: cannot reach ${ctx.baseUrl}: ${detail}`, {
      provider: ctx.provider,
      ...(code === undefined ? {} : { reason: code }),
    });
  }
  if (isA("APIError")) {
    return mapHttpFailure(httpFailure(error as InstanceType<typeof Anthropic.APIError>), ctx);
  }
  if (isBrokenStream(error)) {
    const code = networkCode(error);
    return new LlmConnectionError(
      `${ctx.provider}: the connection to ${ctx.baseUrl} broke while streaming (${code ?? (error as Error).message})`,
      { provider: ctx.provider, reason: code ?? "stream_broken" },
    );
  }
  if (error instanceof SyntaxError) {
    return new LlmProviderError(`${ctx.provider} sent a stream nexo cannot parse: ${error.message}`, {
      provider: ctx.provider,
      retryable: false,
    });
  }
  return error;
}

/** Whether waiting and sending the same request again can succeed. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof LlmRateLimitedError) return asRecord(error.data)?.quota_exhausted !== true;
  if (error instanceof LlmConnectionError) return true;
  if (error instanceof LlmProviderError) return error.retryable;
  return false;
}

/** The wait the server asked for, in milliseconds, when it asked. */
export function retryAfterMsOf(error: unknown): number | undefined {
  const secs =
    error instanceof LlmRateLimitedError || error instanceof LlmProviderError
      ? error.retryAfterSecs
      : undefined;
  return secs === undefined ? undefined : Math.round(secs * 1000);
}

/** What the caller's signal was aborted with, as the error to throw (an AbortError by default). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}
