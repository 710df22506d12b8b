/**
 * The public vocabulary of the JSON-RPC peer (peer.ts): its options, what handlers receive, and
 * the protocol problems it reports.
 */
import type { ErrorProtocol } from "./errors.js";
import type { LineTransportOptions } from "./line-transport.js";
import type { MessageTransport, TransportProblem } from "./transport.js";

export type JsonRpcId = number | string;

/** How this side numbers its own requests. The other side's ids live in a separate space. */
export type IdStrategy = "integer" | "uuid" | { prefix: string } | (() => JsonRpcId);

/** The subset of pino's API the peer logs through (pino loggers fit as they are). */
export interface PeerLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type MalformedPolicy = "reply" | "ignore";

/** Something unusable arrived; reported to `onProtocolProblem` whatever the policy. */
export type ProtocolProblem =
  | TransportProblem
  | { kind: "invalid_request"; detail: string }
  | { kind: "unknown_response_id"; id: unknown }
  | { kind: "orphan_delta"; method: string; requestId: unknown }
  | { kind: "invalid_notification"; method: string; detail: string };

export interface PeerOptions {
  /** What carries the messages: a LineTransport, a WebSocketTransport, … */
  transport: MessageTransport;
  /** Shown in logs. */
  name?: string;
  ids?: IdStrategy;
  /** Default timeout of outgoing requests in ms; 0 disables. Default 30 000. */
  requestTimeoutMs?: number;
  /** Answer malformed input with -32700/-32600 (`reply`) or only log it (`ignore`, the default). */
  malformed?: MalformedPolicy;
  /** Which protocol's meaning to give codes in the reserved band when decoding errors. */
  errorProtocol?: ErrorProtocol;
  logger?: PeerLogger;
  onProtocolProblem?: (problem: ProtocolProblem) => void;
}

/** A peer over a readable/writable pair (stdio): the peer's options plus the line transport's. */
export type StreamPeerOptions = Omit<PeerOptions, "transport"> & LineTransportOptions;

export interface RequestOptions {
  /** Overrides the peer's default; 0 disables the timeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface StreamRequestOptions<D> extends RequestOptions {
  /** Notification method carrying the deltas, each with `params.request_id` = this request's id. */
  deltaMethod: string;
  onDelta: (params: D) => void;
}

/** What a request handler gets besides the params. */
export interface RequestContext {
  readonly id: JsonRpcId | null;
  readonly method: string;
  /** Aborted when the connection closes while the handler runs. */
  readonly signal: AbortSignal;
  /** Sends `method` with `{request_id: <this request's id>, ...params}` — a streamed reply's delta. */
  sendDelta(method: string, params: Record<string, unknown>): Promise<void>;
}

export type RequestHandler = (params: unknown, ctx: RequestContext) => unknown;
export type NotificationHandler = (params: unknown, method: string) => void | Promise<void>;
export type FallbackRequestHandler = (method: string, params: unknown, ctx: RequestContext) => unknown;
