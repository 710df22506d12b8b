/**
 * The SDK's own error classes, with the upstream TypeScript SDK's names and constructor signatures,
 * plus the typed errors a channel, LLM provider or vector memory handler throws to answer with the
 * contract's codes (re-exported from `@nexo/wire`, so the host decodes exactly what was thrown).
 *
 * Two families that are easy to confuse:
 * - errors a handler THROWS to answer the host (tool errors in tools.ts, the channel / LLM / memory
 *   classes below, `JsonRpcError` for any other code): they carry a JSON-RPC code;
 * - errors a plugin RECEIVES when its own call to the host fails (`RpcError` and subclasses): they
 *   are PluginErrors, never sent on the wire as such. A host's refusal of `memory.recall` thrown
 *   out of a tool handler therefore becomes -33403, not the host's code.
 */
import { ToolError as WireToolError } from "@nexo/wire";
import type { PublishRefusal, PublishRefusedData } from "@nexo/wire/schemas/plugin";

/**
 * The classes whose instances count as SDK tool errors. tools.ts registers them: they extend the
 * wire classes (so the peer answers with their code), not PluginError, and JavaScript has single
 * inheritance, so `instanceof PluginError` is answered here instead of by the prototype chain.
 */
export const sdkToolErrorClasses: Array<abstract new (...args: never[]) => WireToolError> = [];

export function isSdkToolError(value: unknown): value is WireToolError {
  if (!(value instanceof WireToolError)) return false;
  return sdkToolErrorClasses.some((cls) => Function.prototype[Symbol.hasInstance].call(cls, value));
}

function isPluginErrorInstance(cls: unknown, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(cls, value)) return true;
  return cls === PluginError && isSdkToolError(value);
}

/** Base of every error the SDK raises (upstream: tool errors included). */
export class PluginError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PluginError";
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of instanceof, maybe a subclass
    return isPluginErrorInstance(this, value);
  }
}

/** The manifest is not valid TOML or breaks a rule of the plugin contract §2. */
export class ManifestError extends PluginError {
  /** The offending key path (`plugin.id`, `plugin.extends.tools[0]`), when one is to blame. */
  readonly field?: string;

  constructor(message: string, field?: string) {
    super(message);
    this.name = "ManifestError";
    this.field = field;
  }
}

/** A value could not be decoded from, or encoded to, the wire (e.g. NaN in a payload). */
export class WireError extends PluginError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "WireError";
  }
}

/** A child → host request (`memory.recall`, `llm.complete`) failed. */
export class RpcError extends PluginError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RpcError";
  }
}

/** The host answered with a JSON-RPC error. */
export class RpcServerError extends RpcError {
  readonly code: number;
  /** The host's `error.data`, if any (upstream SDKs drop it; kept here for diagnostics). */
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown, options?: ErrorOptions) {
    super(`rpc error ${code}: ${message}`, options);
    this.name = "RpcServerError";
    this.code = code;
    this.data = data;
  }
}

/**
 * The host refused an acknowledged publish (`BrokerSender.publishAndWait`): the message was not
 * taken. `reason` says why (`inbox_full`, `queue_full`, `not_acknowledged` may pass on a retry
 * after `retryAfterSecs`; `topic_not_allowed`, `invalid_message`, `not_routed` will not).
 */
export class PublishRefusedError extends RpcServerError {
  readonly reason: PublishRefusal;
  /** Seconds to wait before retrying; undefined when a retry cannot help. */
  readonly retryAfterSecs: number | undefined;

  constructor(code: number, message: string, data: PublishRefusedData, options?: ErrorOptions) {
    super(code, message, data, options);
    this.name = "PublishRefusedError";
    this.reason = data.reason;
    this.retryAfterSecs = data.retry_after_secs;
  }
}

/** No reply from the host in time. */
export class RpcTimeoutError extends RpcError {
  readonly seconds: number;

  constructor(seconds: number) {
    super(`no host reply within ${seconds}s`);
    this.name = "RpcTimeoutError";
    this.seconds = seconds;
  }
}

/** The request could not be sent, or its reply was abandoned (host gone, adapter shutting down). */
export class RpcTransportError extends RpcError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RpcTransportError";
  }
}

/** The host's reply did not have the expected shape. */
export class RpcDecodeError extends RpcError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RpcDecodeError";
  }
}

// Errors a handler throws to answer with a contract code. `JsonRpcError` is the wire RpcError under
// a name that does not clash with the upstream `RpcError` above.
export {
  ChannelAuthenticationError,
  ChannelCode,
  ChannelConnectionError,
  ChannelError,
  ChannelRateLimitedError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  InternalError,
  InvalidParamsError,
  JsonRpcCode,
  LlmAuthenticationError,
  LlmCode,
  LlmConnectionError,
  LlmContextOverflowError,
  LlmError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
  MemoryBackendError,
  MemoryCode,
  MemoryCollectionNotFoundError,
  MemoryDimensionMismatchError,
  MemoryRateLimitedError,
  MemoryWriteFailedError,
  MethodNotFoundError,
  RpcError as JsonRpcError,
  ToolCode,
} from "@nexo/wire";
