/**
 * One attempt of an SDK-backed provider, the part Anthropic and OpenAI share: check that a key and
 * a model are configured, open the vendor stream under an AttemptGuard (the caller's signal plus an
 * idle timeout), decode every chunk into ProviderEvents, and turn whatever fails into nexo's typed
 * LLM errors. The retry policy wraps attempts (retry.ts); this file is one try.
 */
import { LlmAuthenticationError, LlmModelNotFoundError } from "@nexo/wire";
import type { ChatRequest, ProviderEvent } from "../types.js";
import { AttemptGuard, DEFAULT_IDLE_TIMEOUT_MS } from "./attempt-guard.js";
import { type SdkErrorClasses, toLlmError } from "./errors.js";
import type { RetryClock } from "./retry.js";

/** Turns a vendor's stream chunks into ProviderEvents; `finish` checks the stream ended properly. */
export interface StreamDecoder<Chunk> {
  push(chunk: Chunk): Iterable<ProviderEvent>;
  finish(): Iterable<ProviderEvent>;
}

export interface AttemptSpec<Client, Chunk> {
  provider: string;
  baseUrl: string;
  /** The SDK client, or undefined when no API key is configured. */
  client: Promise<Client> | undefined;
  request: ChatRequest;
  defaultModel: string | undefined;
  idleTimeoutMs: number | undefined;
  clock: RetryClock;
  /** The loaded SDK's error classes (empty before it loaded), for mapping its errors. */
  sdkErrors: () => readonly SdkErrorClasses[];
  /** Opens the vendor stream for `model` with the attempt's signal. */
  open(client: Client, model: string, signal: AbortSignal): Promise<AsyncIterable<Chunk>>;
  decoder(): StreamDecoder<Chunk>;
}

/** Most keys come from the environment (`api_key: ${ANTHROPIC_API_KEY}`): name the variable, not only the file. */
function missingKeyHint(provider: string): string {
  const variable = /anthropic/i.test(provider)
    ? "ANTHROPIC_API_KEY"
    : /openai/i.test(provider)
      ? "OPENAI_API_KEY"
      : undefined;
  const usual = variable === undefined ? "" : ` (usually ${variable})`;
  return `llm.yaml's api_key for it is empty: set the environment variable its \${…} reference names${usual} for the daemon, or write the key there`;
}

export async function* runAttempt<Client, Chunk>(
  spec: AttemptSpec<Client, Chunk>,
): AsyncGenerator<ProviderEvent, void, undefined> {
  const { provider, baseUrl, request } = spec;
  if (!spec.client) {
    throw new LlmAuthenticationError(`${provider}: no API key configured (${missingKeyHint(provider)})`, {
      provider,
    });
  }
  const model = request.model || spec.defaultModel;
  if (!model) {
    throw new LlmModelNotFoundError(`${provider}: the request names no model and no default_model is set`, {
      provider,
    });
  }
  const guard = new AttemptGuard(request.signal, spec.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, {
    provider,
    baseUrl,
  });
  try {
    const client = await spec.client;
    const stream = await spec.open(client, model, guard.signal);
    const decoder = spec.decoder();
    for await (const chunk of stream) {
      guard.touch();
      yield* decoder.push(chunk);
    }
    guard.throwIfAborted();
    yield* decoder.finish();
  } catch (error) {
    guard.throwIfAborted();
    throw toLlmError(error, { provider, baseUrl, model, now: spec.clock.now }, spec.sdkErrors());
  } finally {
    guard.dispose();
  }
}
