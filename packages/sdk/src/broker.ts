/**
 * The plugin's handle on its host: `broker.publish` (§5.4), nexo's acknowledged publish
 * (`broker.publish_acked`, through `publishAndWait`) and the framework services `memory.recall`
 * (§5.2) and `llm.complete` (§5.3, streamed with `llm.complete.delta`).
 *
 * Every frame goes through the adapter's JsonRpcPeer, which numbers requests 1, 2, 3, … (one
 * counter for every call, as the contract's hosts expect), writes each frame whole, and matches
 * replies and deltas to their request. This class turns the peer's failures into the upstream
 * SDK's error types: RpcServerError, RpcTimeoutError, RpcTransportError, RpcDecodeError.
 */
import {
  ConnectionClosedError,
  formatIssues,
  RequestCancelledError,
  TimeoutError,
  RpcError as WireRpcError,
} from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import {
  PluginError,
  PublishRefusedError,
  RpcDecodeError,
  RpcServerError,
  RpcTimeoutError,
  RpcTransportError,
  WireError,
} from "./errors.js";
import { Event } from "./event.js";
import {
  ChunkQueue,
  DEFAULT_RPC_TIMEOUT_MS,
  type LlmCompleteOptions,
  type LlmCompleteResult,
  LlmStream,
  LlmStreamOverflowError,
  type MemoryEntry,
  parseLlmCompleteResult,
  parseMemoryEntry,
} from "./host.js";
import { type HostLink, type LineWriter, LineWriterLink } from "./host-link.js";
import { logWarning } from "./log.js";
import { toStrictJson } from "./wire.js";

export type { HostLink, LineWriter } from "./host-link.js";

export interface MemoryRecallOptions {
  agentId: string;
  query: string;
  /** Default 10; the host caps it at 1000. */
  limit?: number;
  /** Default 30 000 ms. */
  timeoutMs?: number;
}

/** Internal to the SDK: the adapter calls it on shutdown (not exported from the package). */
export const abandonHostCalls = Symbol("abandonHostCalls");
/** Internal to the SDK: the adapter records what the host advertised in `initialize`. */
export const setHostFeatures = Symbol("setHostFeatures");

export interface PublishAndWaitOptions {
  /** How long to wait for the host's acknowledgement. Default 30 000 ms. */
  timeoutMs?: number;
}

/** What `publishAndWait` learned. */
export type PublishReceipt =
  /**
   * The host acknowledged the message: `durable` when it is in the daemon's durable inbox (a
   * daemon killed from now on still answers it after its restart); `duplicate` when the inbox
   * already held the same channel message id.
   */
  | { acknowledged: true; eventId: string; durable: boolean; duplicate: boolean }
  /**
   * The host does not offer the acknowledged publish (an upstream host, or a nexo before it): the
   * message went out as the `broker.publish` notification, and nothing is known of its fate.
   */
  | { acknowledged: false };

export class BrokerSender {
  private readonly link: HostLink;
  private readonly inFlight = new Set<AbortController>();
  private hostFeatures: ReadonlySet<plugin.HostFeature> = new Set();

  /**
   * The adapter builds its own; tests may pass a LineWriter to capture `publish` frames. A
   * LineWriter cannot receive replies, so host calls through such a sender fail at once with
   * RpcTransportError instead of waiting for a timeout.
   */
  constructor(target: LineWriter | HostLink) {
    this.link = typeof target === "function" ? new LineWriterLink(target) : target;
  }

  /** Sends a `broker.publish` notification. The host drops topics outside its allowlist (§6). */
  async publish(topic: string, event: Event): Promise<void> {
    const params = publishParams(topic, event);
    try {
      await this.link.notify("broker.publish", params);
    } catch (error) {
      throw sendFailure("broker.publish", error);
    }
  }

  /** Whether the host advertised the acknowledged publish in `initialize`. */
  get acknowledgedPublish(): boolean {
    return this.hostFeatures.has("broker.publish_acked");
  }

  /**
   * Publishes and waits until the host has taken the message. A channel that tells its sender
   * "received" only after this resolves never acknowledges a message a crash of the daemon loses.
   * With a host that does not offer it (see `acknowledgedPublish`), this is `publish` and resolves
   * `{acknowledged: false}` once the notification is written. Throws PublishRefusedError when the
   * host refused the message (it was not taken), RpcTimeoutError / RpcTransportError when no
   * answer came (its fate is unknown).
   */
  async publishAndWait(
    topic: string,
    event: Event,
    options: PublishAndWaitOptions = {},
  ): Promise<PublishReceipt> {
    if (!this.acknowledgedPublish) {
      await this.publish(topic, event);
      return { acknowledged: false };
    }
    const params = publishParams(topic, event);
    let raw: unknown;
    try {
      raw = await this.call("broker.publish_acked", params, options.timeoutMs);
    } catch (error) {
      throw asPublishRefusal(error);
    }
    const result = plugin.BrokerPublishAckedResultSchema.safeParse(raw);
    if (!result.success) {
      throw new RpcDecodeError(
        `broker.publish_acked result: ${formatIssues(result.error.issues, "(result)")}`,
      );
    }
    const { event_id: eventId, durable, duplicate } = result.data;
    return { acknowledged: true, eventId, durable, duplicate };
  }

  /** What the host advertised in `initialize` (`host_features`); set by the adapter. */
  [setHostFeatures](features: readonly plugin.HostFeature[] | undefined): void {
    this.hostFeatures = new Set(features ?? []);
  }

  /**
   * Reports one state change of a pairing challenge (`channel.pairing.update`, nexo's optional
   * pairing feature): `qr_ready` with `data.qr_ascii` / `data.qr_png_base64`, `awaiting_user`,
   * `linked` with `data.device_jid`, `expired` with `data.error`.
   */
  async pairingUpdate(update: plugin.ChannelPairingUpdateParams): Promise<void> {
    const check = plugin.ChannelPairingUpdateParamsSchema.safeParse(update);
    if (!check.success) {
      throw new WireError(`invalid pairing update: ${formatIssues(check.error.issues, "(params)")}`);
    }
    toStrictJson(update, "channel.pairing.update params");
    try {
      await this.link.notify("channel.pairing.update", update);
    } catch (error) {
      throw sendFailure("channel.pairing.update", error);
    }
  }

  /** Up to `limit` memory entries of `agentId` matching `query`. */
  async memoryRecall(options: MemoryRecallOptions): Promise<MemoryEntry[]> {
    const params = { agent_id: options.agentId, query: options.query, limit: options.limit ?? 10 };
    const result = asObject(await this.call("memory.recall", params, options.timeoutMs));
    if (!Array.isArray(result.entries)) {
      throw new RpcDecodeError("memory.recall result has no `entries` array");
    }
    return result.entries.map(parseMemoryEntry);
  }

  /** One LLM completion through a provider the host has configured. */
  async llmComplete(options: LlmCompleteOptions): Promise<LlmCompleteResult> {
    return parseLlmCompleteResult(
      await this.call("llm.complete", llmParams(options, false), options.timeoutMs),
    );
  }

  /** A streamed completion: iterate the result for chunks, then await `.result`. */
  llmCompleteStream(options: LlmCompleteOptions): LlmStream {
    const chunks = new ChunkQueue();
    let params: Record<string, unknown>;
    try {
      params = llmParams(options, true);
      toStrictJson(params, "llm.complete params");
    } catch (error) {
      chunks.end();
      return new LlmStream(chunks, settledRejection(sendFailure("llm.complete", error)));
    }
    let overflowed = false;
    const controller = this.track();
    const result = this.link
      .requestStream<unknown, unknown>("llm.complete", params, {
        deltaMethod: "llm.complete.delta",
        timeoutMs: options.timeoutMs ?? 0,
        signal: controller.signal,
        onDelta: (raw) => {
          const delta = plugin.LlmCompleteDeltaParamsSchema.safeParse(raw);
          if (!delta.success) {
            logWarning("llm.complete.delta without a string chunk dropped", { params: raw });
            return;
          }
          if (!chunks.push(delta.data.chunk) && !overflowed) {
            overflowed = true;
            controller.abort(new LlmStreamOverflowError());
          }
        },
      })
      .then(
        (final) => parseLlmCompleteResult(final),
        (error: unknown) => {
          throw hostCallFailure("llm.complete", error, controller);
        },
      )
      .finally(() => {
        this.inFlight.delete(controller);
        chunks.end();
      });
    // A plugin that only iterates never looks at `result`; its failure must not crash the process
    // as an unhandled rejection, but it is logged so it is not silent either.
    result.catch((error: Error) => logWarning(`llm.complete stream failed: ${error.message}`));
    return new LlmStream(chunks, result);
  }

  /** Fails every pending host call with `error` (the adapter's first shutdown step). */
  [abandonHostCalls](error: RpcTransportError): void {
    for (const controller of this.inFlight) controller.abort(error);
    this.inFlight.clear();
  }

  private track(): AbortController {
    const controller = new AbortController();
    this.inFlight.add(controller);
    return controller;
  }

  private async call(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    try {
      toStrictJson(params, `${method} params`);
    } catch (error) {
      throw sendFailure(method, error);
    }
    const controller = this.track();
    try {
      return await this.link.request(method, params, {
        timeoutMs: timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
        signal: controller.signal,
      });
    } catch (error) {
      throw hostCallFailure(method, error, controller);
    } finally {
      this.inFlight.delete(controller);
    }
  }
}

/** `broker.publish` / `broker.publish_acked` params, checked against the contract and strict JSON. */
function publishParams(topic: string, event: Event): plugin.BrokerPublishParams {
  const params = { topic, event: Event.toJson(event) };
  const check = plugin.BrokerPublishParamsSchema.safeParse(params);
  if (!check.success) {
    throw new WireError(`cannot publish: ${formatIssues(check.error.issues, "(params)")}`);
  }
  toStrictJson(params, "broker.publish params");
  return params as plugin.BrokerPublishParams;
}

/** A host error whose data names a publish refusal becomes PublishRefusedError; others pass. */
function asPublishRefusal(error: unknown): unknown {
  if (!(error instanceof RpcServerError)) return error;
  const data = plugin.PublishRefusedDataSchema.safeParse(error.data);
  if (!data.success) return error;
  const message = error.message.replace(/^rpc error -?\d+: /, "");
  return new PublishRefusedError(error.code, message, data.data, { cause: error });
}

function llmParams(options: LlmCompleteOptions, stream: boolean): Record<string, unknown> {
  const params: Record<string, unknown> = {
    provider: options.provider,
    model: options.model,
    messages: options.messages,
    max_tokens: options.maxTokens ?? 4096,
    temperature: options.temperature ?? 0.7,
  };
  if (options.systemPrompt !== undefined) params.system_prompt = options.systemPrompt;
  // Upstream hosts read a present `stream` key as a request to stream, so it is only ever `true`.
  if (stream) params.stream = true;
  return params;
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function settledRejection<T>(error: Error): Promise<T> {
  const promise = Promise.reject(error);
  promise.catch(() => undefined);
  return promise;
}

/** A frame that never left: unrepresentable JSON, or no connection. */
function sendFailure(method: string, error: unknown): Error {
  if (error instanceof PluginError) {
    return method === "broker.publish"
      ? error
      : new RpcTransportError(`cannot send ${method}: ${error.message}`, { cause: error });
  }
  if (error instanceof ConnectionClosedError) {
    return new RpcTransportError(`cannot send ${method}: ${error.message}`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RpcTransportError(`cannot send ${method}: ${message}`, { cause: error });
}

function hostCallFailure(method: string, error: unknown, controller: AbortController): Error {
  if (error instanceof WireRpcError)
    return new RpcServerError(error.code, error.message, error.data, { cause: error });
  if (error instanceof TimeoutError) return new RpcTimeoutError(error.timeoutMs / 1000);
  if (error instanceof RequestCancelledError) {
    const reason: unknown = controller.signal.reason;
    // A fresh error per call, so each caller's stack trace is its own.
    if (reason instanceof RpcTransportError) return new RpcTransportError(reason.message, { cause: error });
    if (reason instanceof PluginError) return reason;
    return new RpcTransportError(`${method} cancelled`, { cause: error });
  }
  if (error instanceof ConnectionClosedError) {
    return new RpcTransportError(`${method} abandoned: ${error.message}`, { cause: error });
  }
  return sendFailure(method, error);
}
