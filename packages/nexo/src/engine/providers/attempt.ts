/**
 * One attempt of an SDK-backed provider, the part Anthropic and OpenAI share: check that a key and
 * a model are configured, send the request with the vendor's SDK under an AttemptGuard (the
 * caller's signal plus an idle timeout), read the response body's server-sent events (sse.ts),
 * decode each into ProviderEvents, and turn whatever fails into nexo's typed LLM errors. The SDK
 * builds, authenticates and sends the request and throws its typed errors for an HTTP failure;
 * the body is read here, one await per network read rather than per event. The retry policy wraps
 * attempts (retry.ts); this file is one try.
 *
 * Text (and unsigned thinking) deltas that arrive in one network read leave as one delta: they
 * reached nexo at the same moment, so no reader could have seen them apart, and everything
 * downstream (engine, hub, doors, stdout) then does its per-event work once per read instead of
 * once per vendor event — for a burst of a hundred deltas in a 16 KiB read that work was most of
 * a streamed answer's CPU (docs/performance.md, "The json-stream long answer").
 */
import { LlmAuthenticationError, LlmConnectionError, LlmModelNotFoundError } from "@nexo/wire";
import type { ChatRequest, ProviderEvent } from "../types.js";
import { AttemptGuard, DEFAULT_IDLE_TIMEOUT_MS } from "./attempt-guard.js";
import { type SdkErrorClasses, toLlmError } from "./errors.js";
import { responseReads } from "./node-fetch.js";
import type { RetryClock } from "./retry.js";
import { SseParser, type SseReader, type SseSink } from "./sse.js";
import { Utf8Stream } from "./utf8-stream.js";

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
  /**
   * Sends the streaming request for `model` with the attempt's signal and resolves with the
   * response, its body unread; the SDK throws its APIError for an HTTP failure.
   */
  open(client: Client, model: string, signal: AbortSignal): Promise<Response>;
  /**
   * The reader of one response's events: each SSE message → the vendor's chunk, or undefined for
   * a message that carries none (a ping, the end marker); a message in its frame → its text.
   * Throws the SDK's APIError for an error the vendor sends inside the stream.
   */
  messages(headers: Headers): SseReader<Chunk>;
  /** Decodes the reader's chunks, and the text of a message in the reader's frame as its chunk. */
  decoder(): StreamDecoder<Chunk | string>;
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

/** Appends `event`, joining it to the previous text or unsigned thinking delta of the same read. */
function add(events: ProviderEvent[], event: ProviderEvent): void {
  const last = events.length > 0 ? events[events.length - 1] : undefined;
  if (last !== undefined && last.type === event.type) {
    if (event.type === "text_delta") {
      events[events.length - 1] = { type: "text_delta", text: (last as typeof event).text + event.text };
      return;
    }
    if (event.type === "thinking_delta" && event.signature === undefined) {
      const previous = last as typeof event;
      if (previous.signature === undefined) {
        events[events.length - 1] = { type: "thinking_delta", text: previous.text + event.text };
        return;
      }
    }
  }
  events.push(event);
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
    const response = await spec.open(client, model, guard.signal);
    const body = responseReads(response);
    if (!body) throw new LlmConnectionError(`${provider}: ${baseUrl} answered without a body`, { provider });
    const toChunk = spec.messages(response.headers);
    const decoder = spec.decoder();
    const sse = new SseParser();
    const text = new Utf8Stream();
    const events: ProviderEvent[] = [];
    // A read's events are decoded together; an error in one of its messages (the vendor's error
    // event, an unparsable chunk) is thrown after the events before it have been passed on.
    let failure: { error: unknown } | undefined;
    const sink: SseSink = {
      frame: toChunk.frame,
      message(message) {
        if (failure) return;
        try {
          const chunk = toChunk(message);
          if (chunk !== undefined) for (const event of decoder.push(chunk)) add(events, event);
        } catch (error) {
          failure = { error };
        }
      },
      text(piece) {
        if (!failure) for (const event of decoder.push(piece)) add(events, event);
      },
    };
    for await (const reads of body) {
      guard.touch();
      for (const bytes of reads) {
        sse.read(text.decode(bytes), sink);
        if (failure) break;
      }
      for (const event of events) yield event;
      events.length = 0;
      if (failure) throw failure.error;
    }
    sse.read(text.end(), sink);
    for (const event of events) yield event;
    if (failure) throw failure.error;
    sse.end();
    guard.throwIfAborted();
    yield* decoder.finish();
  } catch (error) {
    guard.throwIfAborted();
    throw toLlmError(error, { provider, baseUrl, model, now: spec.clock.now }, spec.sdkErrors());
  } finally {
    guard.dispose();
  }
}
