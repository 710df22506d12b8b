/**
 * Every error code of the five specs, in one place.
 *
 * The specs reuse numbers with different meanings depending on the protocol (for example -32004 is
 * "capability_not_granted" on the admin RPC but "auth error with an external service" when a
 * microapp answers a tools/call), so codes are grouped by the protocol that defines them rather
 * than kept in one flat table. A code is for code; a message is for humans.
 */

/** JSON-RPC 2.0 standard codes (every protocol). */
export const JsonRpcCode = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** The band -32000..-32099 that every nexo spec reserves for implementation-defined errors. */
export const NEXO_RESERVED_MIN = -32099;
export const NEXO_RESERVED_MAX = -32000;

/** Codes a microapp SHOULD emit in its replies (microapp contract, "Reserved JSON-RPC error codes"). */
export const MicroappCode = {
  capabilityNotGranted: -32000,
  toolInputInvalid: -32001,
  backendUnavailable: -32002,
  rateLimited: -32003,
  externalAuthFailed: -32004,
  internal: -32099,
} as const;

/** Codes the daemon answers on the admin RPC (`nexo/admin/*`, admin-rpc spec). */
export const AdminCode = {
  /** A capability the microapp was not granted; `data: {capability, microapp_id, method}`. */
  capabilityNotGranted: -32004,
  /**
   * nexo's decision in the reserved band, the same number and meaning as for plugins: the
   * microapp already has the maximum of admin calls running; retry later. `data: {limit}`.
   */
  overloaded: -32012,
} as const;

/**
 * Codes the host answers to a plugin's own requests (`memory.recall`, `llm.complete`) and that the
 * plugin contract reserves. nexo decides the grant denials (plugin contract §5, documented in
 * docs/plugins.md) inside the reserved band.
 */
export const PluginHostCode = {
  /** The plugin's shutdown handler failed (plugin contract §7). */
  shutdownFailed: -32000,
  /** The plugin has no grant for the agent's memory it asked for. */
  memoryAccessDenied: -32010,
  /** The plugin has no grant for the LLM provider it asked for. */
  providerAccessDenied: -32011,
  /** A host-side queue for this plugin is full; retry later. */
  overloaded: -32012,
  /**
   * `broker.publish_acked` refusals (nexo's acknowledged publish, docs/plugins.md). Each carries
   * `data.reason` (schemas/plugin/broker.ts); the message was NOT taken.
   */
  /** The topic is outside the plugin's allowlist (§6). */
  publishTopicNotAllowed: -32013,
  /** The durable inbox is at its bound; retry later (`data.retry_after_secs`). */
  inboxFull: -32014,
  /** No agent is bound to the channel the message was published on. */
  publishNotRouted: -32015,
  /**
   * No acknowledgement: the daemon is not routing (starting, stopping), the broker is down, or the
   * router did not report within the ack timeout. Retry later (`data.retry_after_secs`).
   */
  publishNotAcknowledged: -32016,
} as const;

/** Channel adapter errors (plugin contract §5.x). */
export const ChannelCode = {
  connectionFailed: -33001,
  authenticationFailed: -33002,
  recipientInvalid: -33003,
  rateLimited: -33004,
  unsupportedFeature: -33005,
} as const;

/** LLM provider errors (plugin contract §5.y). */
export const LlmCode = {
  connectionFailed: -33101,
  authenticationFailed: -33102,
  rateLimited: -33103,
  modelNotFound: -33104,
  contextOverflow: -33105,
} as const;

/** Vector memory backend errors (plugin contract §5.w). */
export const MemoryCode = {
  collectionNotFound: -33301,
  dimensionMismatch: -33302,
  rateLimited: -33303,
  writeFailed: -33304,
} as const;

/** Tool errors (plugin contract §5.t). */
export const ToolCode = {
  notFound: -33401,
  argumentInvalid: -33402,
  executionFailed: -33403,
  unavailable: -33404,
  denied: -33405,
} as const;

/** The error object of a JSON-RPC response. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * A JSON-RPC error with its code and data. Throw it from a request handler and the peer answers
 * with exactly this error; receive it from a failed request and inspect `code` and `data`.
 */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }

  toJSON(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** Rebuilds the most specific typed error for an error object received on the wire. */
  static fromObject(raw: unknown, protocol: ErrorProtocol = "generic"): RpcError {
    const obj = (raw ?? {}) as Partial<RpcErrorObject>;
    const code =
      typeof obj.code === "number" && Number.isInteger(obj.code) ? obj.code : JsonRpcCode.internalError;
    const message = typeof obj.message === "string" ? obj.message : "error without message";
    return decodeError(code, message, obj.data, protocol);
  }
}

export class ParseError extends RpcError {
  constructor(message = "parse error", data?: unknown) {
    super(JsonRpcCode.parseError, message, data);
    this.name = "ParseError";
  }
}
export class InvalidRequestError extends RpcError {
  constructor(message = "invalid request", data?: unknown) {
    super(JsonRpcCode.invalidRequest, message, data);
    this.name = "InvalidRequestError";
  }
}
export class MethodNotFoundError extends RpcError {
  constructor(message = "method not found", data?: unknown) {
    super(JsonRpcCode.methodNotFound, message, data);
    this.name = "MethodNotFoundError";
  }
  /**
   * The answer to a method nobody serves: exactly `{code, message}`, no `data`, because strict
   * plugin hosts compare the error object's keys (plugin contract §3).
   */
  static forMethod(method: string): MethodNotFoundError {
    return new MethodNotFoundError(`method not found: ${method}`);
  }
}
export class InvalidParamsError extends RpcError {
  constructor(message = "invalid params", data?: unknown) {
    super(JsonRpcCode.invalidParams, message, data);
    this.name = "InvalidParamsError";
  }
}
export class InternalError extends RpcError {
  constructor(message = "internal error", data?: unknown) {
    super(JsonRpcCode.internalError, message, data);
    this.name = "InternalError";
  }
}

/** Any thrown value as an RpcError: typed errors keep their code, anything else is -32603. */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof Error) return new InternalError(error.message || error.name);
  return new InternalError(String(error));
}

// --- transport-level failures (never on the wire as such) ---------------------------------------

/** An outgoing request got no reply in time. The peer stays usable. */
export class TimeoutError extends Error {
  readonly method: string;
  readonly timeoutMs: number;
  constructor(method: string, timeoutMs: number) {
    super(`request ${method} timed out after ${timeoutMs} ms`);
    this.name = "TimeoutError";
    this.method = method;
    this.timeoutMs = timeoutMs;
  }
}

/** The connection ended (EOF, child exit, explicit close) while the request was pending. */
export class ConnectionClosedError extends Error {
  readonly reason: string;
  constructor(reason = "connection closed") {
    super(reason);
    this.name = "ConnectionClosedError";
    this.reason = reason;
  }
}

/** The caller aborted the request through its AbortSignal. */
export class RequestCancelledError extends Error {
  readonly method: string;
  constructor(method: string, reason?: unknown) {
    super(`request ${method} was cancelled${reason instanceof Error ? `: ${reason.message}` : ""}`);
    this.name = "RequestCancelledError";
    this.method = method;
  }
}

/** The other side answered with a reply (or a streamed delta) that breaks its method's schema. */
export class MalformedReplyError extends Error {
  readonly method: string;
  readonly detail: string;
  constructor(method: string, detail: string) {
    super(`malformed ${method} reply: ${detail}`);
    this.name = "MalformedReplyError";
    this.method = method;
    this.detail = detail;
  }
}

/** A frame was larger than the configured maximum. */
export class FrameTooLargeError extends Error {
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(bytes: number, maxBytes: number) {
    super(`frame of ${bytes} bytes exceeds the ${maxBytes}-byte limit`);
    this.name = "FrameTooLargeError";
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

// --- channel errors (plugin contract §5.x) ------------------------------------------------------

export class ChannelError extends RpcError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.name = "ChannelError";
  }
}
export class ChannelConnectionError extends ChannelError {
  constructor(message: string, data?: unknown) {
    super(ChannelCode.connectionFailed, message, data);
    this.name = "ChannelConnectionError";
  }
}
export class ChannelAuthenticationError extends ChannelError {
  constructor(message: string, data?: unknown) {
    super(ChannelCode.authenticationFailed, message, data);
    this.name = "ChannelAuthenticationError";
  }
}
export class ChannelRecipientError extends ChannelError {
  readonly recipient: string | undefined;
  readonly reason: string;
  constructor(message: string, data?: { recipient?: string; reason?: string } & Record<string, unknown>) {
    super(ChannelCode.recipientInvalid, message, data);
    this.name = "ChannelRecipientError";
    this.recipient = data?.recipient;
    this.reason = data?.reason ?? message;
  }
}
export class ChannelRateLimitedError extends ChannelError {
  readonly retryAfterSecs: number | undefined;
  constructor(message: string, data?: { retry_after_secs?: number } & Record<string, unknown>) {
    super(ChannelCode.rateLimited, message, data);
    this.name = "ChannelRateLimitedError";
    this.retryAfterSecs = numberOrUndefined(data?.retry_after_secs);
  }
}
export class ChannelUnsupportedError extends ChannelError {
  readonly feature: string;
  constructor(message: string, data?: { feature?: string } & Record<string, unknown>) {
    super(ChannelCode.unsupportedFeature, message, data);
    this.name = "ChannelUnsupportedError";
    this.feature = data?.feature ?? message;
  }
}

// --- LLM errors (plugin contract §5.y; also what our own providers throw) ------------------------

export class LlmError extends RpcError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.name = "LlmError";
  }
}
export class LlmConnectionError extends LlmError {
  constructor(message: string, data?: unknown) {
    super(LlmCode.connectionFailed, message, data);
    this.name = "LlmConnectionError";
  }
}
export class LlmAuthenticationError extends LlmError {
  constructor(message: string, data?: unknown) {
    super(LlmCode.authenticationFailed, message, data);
    this.name = "LlmAuthenticationError";
  }
}
export class LlmRateLimitedError extends LlmError {
  readonly retryAfterSecs: number | undefined;
  constructor(message: string, data?: { retry_after_secs?: number } & Record<string, unknown>) {
    super(LlmCode.rateLimited, message, data);
    this.name = "LlmRateLimitedError";
    this.retryAfterSecs = numberOrUndefined(data?.retry_after_secs);
  }
}
export class LlmModelNotFoundError extends LlmError {
  constructor(message: string, data?: unknown) {
    super(LlmCode.modelNotFound, message, data);
    this.name = "LlmModelNotFoundError";
  }
}
export class LlmContextOverflowError extends LlmError {
  constructor(message: string, data?: unknown) {
    super(LlmCode.contextOverflow, message, data);
    this.name = "LlmContextOverflowError";
  }
}

// --- vector memory errors (plugin contract §5.w) ------------------------------------------------

export class MemoryBackendError extends RpcError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.name = "MemoryBackendError";
  }
}
export class MemoryCollectionNotFoundError extends MemoryBackendError {
  readonly collection: string | undefined;
  constructor(message: string, data?: { collection?: string } & Record<string, unknown>) {
    super(MemoryCode.collectionNotFound, message, data);
    this.name = "MemoryCollectionNotFoundError";
    this.collection = data?.collection;
  }
}
export class MemoryDimensionMismatchError extends MemoryBackendError {
  readonly expected: number | undefined;
  readonly got: number | undefined;
  constructor(message: string, data?: { expected?: number; got?: number } & Record<string, unknown>) {
    super(MemoryCode.dimensionMismatch, message, data);
    this.name = "MemoryDimensionMismatchError";
    this.expected = numberOrUndefined(data?.expected);
    this.got = numberOrUndefined(data?.got);
  }
}
export class MemoryRateLimitedError extends MemoryBackendError {
  readonly retryAfterSecs: number | undefined;
  constructor(message: string, data?: { retry_after_secs?: number } & Record<string, unknown>) {
    super(MemoryCode.rateLimited, message, data);
    this.name = "MemoryRateLimitedError";
    this.retryAfterSecs = numberOrUndefined(data?.retry_after_secs);
  }
}
export class MemoryWriteFailedError extends MemoryBackendError {
  constructor(message: string, data?: unknown) {
    super(MemoryCode.writeFailed, message, data);
    this.name = "MemoryWriteFailedError";
  }
}

// --- tool errors (plugin contract §5.t; the SDK throws these, the host decodes them) ------------

export class ToolError extends RpcError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.name = "ToolError";
  }
}
export class ToolNotFoundError extends ToolError {
  constructor(message: string, data?: unknown) {
    super(ToolCode.notFound, message, data);
    this.name = "ToolNotFoundError";
  }
}
export class ToolArgumentInvalidError extends ToolError {
  /** The offending fields, as the spec's `details` value. */
  readonly details: unknown;
  constructor(message: string, details?: unknown) {
    super(ToolCode.argumentInvalid, message, details === undefined ? undefined : { details });
    this.name = "ToolArgumentInvalidError";
    this.details = details;
  }
}
export class ToolExecutionFailedError extends ToolError {
  constructor(message: string, data?: unknown) {
    super(ToolCode.executionFailed, message, data);
    this.name = "ToolExecutionFailedError";
  }
}
export class ToolUnavailableError extends ToolError {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(
      ToolCode.unavailable,
      message,
      retryAfterMs === undefined ? undefined : { retry_after_ms: retryAfterMs },
    );
    this.name = "ToolUnavailableError";
    this.retryAfterMs = retryAfterMs;
  }
}
export class ToolDeniedError extends ToolError {
  constructor(message: string, data?: unknown) {
    super(ToolCode.denied, message, data);
    this.name = "ToolDeniedError";
  }
}

// --- microapp replies (microapp contract, "Reserved JSON-RPC error codes") -----------------------

/**
 * An error a microapp answers a daemon request with (a tools/call whose input or backend failed,
 * …), as opposed to a tool that ran and failed, which is a `{error}` result.
 */
export class MicroappError extends RpcError {
  constructor(code: number, message: string, data?: unknown) {
    super(code, message, data);
    this.name = "MicroappError";
  }
}
/** -32001: the tool's input failed its schema; `details` names the offending fields. */
export class MicroappToolInputInvalidError extends MicroappError {
  readonly details: unknown;
  constructor(message: string, details?: unknown) {
    super(MicroappCode.toolInputInvalid, message, details === undefined ? undefined : { details });
    this.name = "MicroappToolInputInvalidError";
    this.details = details;
  }
}
/** -32002: a service the microapp depends on is down. */
export class MicroappBackendUnavailableError extends MicroappError {
  constructor(message: string, data?: unknown) {
    super(MicroappCode.backendUnavailable, message, data);
    this.name = "MicroappBackendUnavailableError";
  }
}
/** -32003: the microapp's own per-tool rate limit; `retryAfterMs` as `data.retry_after_ms`. */
export class MicroappRateLimitedError extends MicroappError {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, retryAfterMs?: number) {
    super(
      MicroappCode.rateLimited,
      message,
      retryAfterMs === undefined ? undefined : { retry_after_ms: retryAfterMs },
    );
    this.name = "MicroappRateLimitedError";
    this.retryAfterMs = retryAfterMs;
  }
}
/** -32004 (on a microapp's reply): its external service refused its credentials. */
export class MicroappExternalAuthError extends MicroappError {
  constructor(message: string, data?: unknown) {
    super(MicroappCode.externalAuthFailed, message, data);
    this.name = "MicroappExternalAuthError";
  }
}
/** -32099: anything else that went wrong inside the microapp. */
export class MicroappInternalError extends MicroappError {
  constructor(message: string, data?: unknown) {
    super(MicroappCode.internal, message, data);
    this.name = "MicroappInternalError";
  }
}

// --- admin RPC --------------------------------------------------------------------------------

/** The capability gate refused an admin call; `data: {capability, microapp_id, method}`. */
export class CapabilityNotGrantedError extends RpcError {
  readonly capability: string;
  readonly method: string;
  /** The microapp the daemon refused (`data.microapp_id`), when it said. */
  readonly microappId: string | undefined;
  constructor(capability: string, method: string, microappId?: string) {
    super(AdminCode.capabilityNotGranted, "capability_not_granted", {
      capability,
      ...(microappId === undefined ? {} : { microapp_id: microappId }),
      method,
    });
    this.name = "CapabilityNotGrantedError";
    this.capability = capability;
    this.method = method;
    this.microappId = microappId;
  }
}

// --- decoding -----------------------------------------------------------------------------------

/**
 * Which protocol an error came from. Codes in the reserved band mean different things per
 * protocol, so the decoder must be told; the -33xxx bands are unambiguous.
 */
export type ErrorProtocol = "generic" | "plugin" | "microapp" | "admin";

function numberOrUndefined(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function decodeError(code: number, message: string, data: unknown, protocol: ErrorProtocol): RpcError {
  const rec = asRecord(data);
  switch (code) {
    case JsonRpcCode.parseError:
      return new ParseError(message, data);
    case JsonRpcCode.invalidRequest:
      return new InvalidRequestError(message, data);
    case JsonRpcCode.methodNotFound:
      return new MethodNotFoundError(message, data);
    case JsonRpcCode.invalidParams:
      return new InvalidParamsError(message, data);
    case JsonRpcCode.internalError:
      return new InternalError(message, data);
    case ChannelCode.connectionFailed:
      return new ChannelConnectionError(message, data);
    case ChannelCode.authenticationFailed:
      return new ChannelAuthenticationError(message, data);
    case ChannelCode.recipientInvalid:
      return new ChannelRecipientError(message, rec as { recipient?: string; reason?: string });
    case ChannelCode.rateLimited:
      return new ChannelRateLimitedError(message, rec as { retry_after_secs?: number });
    case ChannelCode.unsupportedFeature:
      return new ChannelUnsupportedError(message, rec as { feature?: string });
    case LlmCode.connectionFailed:
      return new LlmConnectionError(message, data);
    case LlmCode.authenticationFailed:
      return new LlmAuthenticationError(message, data);
    case LlmCode.rateLimited:
      return new LlmRateLimitedError(message, rec as { retry_after_secs?: number });
    case LlmCode.modelNotFound:
      return new LlmModelNotFoundError(message, data);
    case LlmCode.contextOverflow:
      return new LlmContextOverflowError(message, data);
    case MemoryCode.collectionNotFound:
      return new MemoryCollectionNotFoundError(message, rec as { collection?: string });
    case MemoryCode.dimensionMismatch:
      return new MemoryDimensionMismatchError(message, rec as { expected?: number; got?: number });
    case MemoryCode.rateLimited:
      return new MemoryRateLimitedError(message, rec as { retry_after_secs?: number });
    case MemoryCode.writeFailed:
      return new MemoryWriteFailedError(message, data);
    case ToolCode.notFound:
      return new ToolNotFoundError(message, data);
    case ToolCode.argumentInvalid: {
      const e = new ToolArgumentInvalidError(message, rec?.details);
      return Object.assign(e, { data });
    }
    case ToolCode.executionFailed:
      return new ToolExecutionFailedError(message, data);
    case ToolCode.unavailable: {
      const e = new ToolUnavailableError(message, numberOrUndefined(rec?.retry_after_ms));
      return Object.assign(e, { data });
    }
    case ToolCode.denied:
      return new ToolDeniedError(message, data);
  }
  if (protocol === "microapp") {
    switch (code) {
      case MicroappCode.toolInputInvalid:
        return Object.assign(new MicroappToolInputInvalidError(message, rec?.details), { data });
      case MicroappCode.backendUnavailable:
        return new MicroappBackendUnavailableError(message, data);
      case MicroappCode.rateLimited:
        return Object.assign(new MicroappRateLimitedError(message, numberOrUndefined(rec?.retry_after_ms)), {
          data,
        });
      case MicroappCode.externalAuthFailed:
        return new MicroappExternalAuthError(message, data);
      case MicroappCode.internal:
        return new MicroappInternalError(message, data);
    }
  }
  // -32004 also answers `processing/intervention` on a scope that is not paused (`not_paused`):
  // only an error naming the missing capability is a capability denial.
  if (
    protocol === "admin" &&
    code === AdminCode.capabilityNotGranted &&
    typeof rec?.capability === "string"
  ) {
    const e = new CapabilityNotGrantedError(
      rec.capability,
      typeof rec.method === "string" ? rec.method : "unknown",
      typeof rec.microapp_id === "string" ? rec.microapp_id : undefined,
    );
    return Object.assign(e, { data });
  }
  return new RpcError(code, message, data);
}

/** A short, stable name for a code in the context of a protocol, for logs and docs. */
export function describeCode(code: number, protocol: ErrorProtocol = "generic"): string {
  for (const [group, table] of codeTables(protocol)) {
    for (const [name, value] of Object.entries(table)) if (value === code) return `${group}.${name}`;
  }
  if (code >= NEXO_RESERVED_MIN && code <= NEXO_RESERVED_MAX) return "nexo.reserved";
  return "unknown";
}

function codeTables(protocol: ErrorProtocol): Array<[string, Record<string, number>]> {
  const common: Array<[string, Record<string, number>]> = [
    ["jsonrpc", JsonRpcCode],
    ["channel", ChannelCode],
    ["llm", LlmCode],
    ["memory", MemoryCode],
    ["tool", ToolCode],
  ];
  if (protocol === "plugin") common.push(["plugin", PluginHostCode]);
  if (protocol === "microapp") common.push(["microapp", MicroappCode]);
  if (protocol === "admin") common.push(["admin", AdminCode]);
  return common;
}
