/**
 * A bidirectional JSON-RPC 2.0 peer over a pair of streams. Both ends of every nexo connection use
 * it: the host towards plugins and microapps, the SDK inside them, the doors towards UIs.
 *
 * Rules (docs/architecture.md, "The wire layer"):
 * - incoming requests are dispatched concurrently; the reader never waits for a handler;
 * - every outgoing request has a timeout and can be cancelled with an AbortSignal;
 * - when the connection ends, every pending request fails at once with ConnectionClosedError and
 *   every running handler sees its signal aborted;
 * - malformed input is either answered (-32700/-32600 with id null) or logged and ignored.
 */
import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import {
  ConnectionClosedError,
  type ErrorProtocol,
  InternalError,
  InvalidRequestError,
  JsonRpcCode,
  MethodNotFoundError,
  ParseError,
  RequestCancelledError,
  RpcError,
  TimeoutError,
} from "./errors.js";
import { DEFAULT_MAX_FRAME_BYTES, type FrameProblem, FrameWriter, LineDecoder } from "./framing.js";

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
  | FrameProblem
  | { kind: "parse_error"; detail: string }
  | { kind: "invalid_request"; detail: string }
  | { kind: "unknown_response_id"; id: unknown }
  | { kind: "orphan_delta"; method: string; requestId: unknown };

export interface PeerOptions {
  input: Readable;
  output: Writable;
  /** Shown in logs. */
  name?: string;
  ids?: IdStrategy;
  /** Default timeout of outgoing requests in ms; 0 disables. Default 30 000. */
  requestTimeoutMs?: number;
  /** Inbound line cap in bytes. Default 1 MiB. */
  maxFrameBytes?: number;
  /** Outbound frame cap in bytes. Default: none. */
  maxOutgoingFrameBytes?: number;
  /** Reject NaN/Infinity/BigInt on send instead of sending `null`. */
  strictJson?: boolean;
  /** Answer malformed input with -32700/-32600 (`reply`) or only log it (`ignore`, the default). */
  malformed?: MalformedPolicy;
  /** Which protocol's meaning to give codes in the reserved band when decoding errors. */
  errorProtocol?: ErrorProtocol;
  logger?: PeerLogger;
  onProtocolProblem?: (problem: ProtocolProblem) => void;
  /** End the output stream when the peer closes. Default true. */
  endOutputOnClose?: boolean;
}

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

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  onDelta: ((params: unknown) => void) | undefined;
}

export interface CloseInfo {
  reason: string;
}

const noopLogger: PeerLogger = { debug() {}, warn() {}, error() {} };

export class JsonRpcPeer {
  readonly name: string;
  private readonly decoder: LineDecoder;
  private readonly writer: FrameWriter;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly logger: PeerLogger;
  private readonly malformedPolicy: MalformedPolicy;
  private readonly errorProtocol: ErrorProtocol;
  private readonly defaultTimeoutMs: number;
  private readonly nextId: () => JsonRpcId;
  private readonly onProblem: ((problem: ProtocolProblem) => void) | undefined;
  private readonly endOutputOnClose: boolean;

  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly running = new Set<IncomingRequest>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly deltaMethods = new Map<string, number>();
  private fallbackRequest: FallbackRequestHandler | undefined;
  private fallbackNotification: NotificationHandler | undefined;

  private closeInfo: CloseInfo | undefined;
  private resolveClosed!: (info: CloseInfo) => void;
  /** Resolves once, when the connection has closed for whatever reason. */
  readonly closed: Promise<CloseInfo>;

  constructor(options: PeerOptions) {
    this.name = options.name ?? "peer";
    this.input = options.input;
    this.output = options.output;
    this.logger = options.logger ?? noopLogger;
    this.malformedPolicy = options.malformed ?? "ignore";
    this.errorProtocol = options.errorProtocol ?? "generic";
    this.defaultTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.nextId = makeIdGenerator(options.ids ?? "integer");
    this.onProblem = options.onProtocolProblem;
    this.endOutputOnClose = options.endOutputOnClose ?? true;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });

    this.writer = new FrameWriter(this.output, {
      maxFrameBytes: options.maxOutgoingFrameBytes,
      strictJson: options.strictJson,
    });
    this.decoder = new LineDecoder(
      {
        frame: (line) => this.onLine(line),
        problem: (problem) => this.onFrameProblem(problem),
      },
      { maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES },
    );

    this.input.on("data", this.onData);
    this.input.on("end", this.onInputEnd);
    this.input.on("close", this.onInputClose);
    this.input.on("error", this.onInputError);
    this.output.on("error", this.onOutputError);
  }

  // --- registration ---------------------------------------------------------------------------

  /** Registers the handler for incoming requests of `method`. Its return value is the result. */
  onRequest(method: string, handler: RequestHandler): this {
    this.requestHandlers.set(method, handler);
    return this;
  }

  onNotification(method: string, handler: NotificationHandler): this {
    this.notificationHandlers.set(method, handler);
    return this;
  }

  /** Called for requests without a registered handler (instead of answering -32601). */
  setFallbackRequestHandler(handler: FallbackRequestHandler | undefined): this {
    this.fallbackRequest = handler;
    return this;
  }

  setFallbackNotificationHandler(handler: NotificationHandler | undefined): this {
    this.fallbackNotification = handler;
    return this;
  }

  // --- outgoing -------------------------------------------------------------------------------

  /** Sends a request and resolves with its result, or rejects with a typed error. */
  request<R = unknown>(method: string, params?: unknown, options: RequestOptions = {}): Promise<R> {
    return this.send<R>(method, params, options, undefined);
  }

  /**
   * Sends a request whose reply streams: `deltaMethod` notifications carrying `request_id` equal
   * to this request's id arrive first (each passed to `onDelta`), then the final response.
   */
  requestStream<R = unknown, D = unknown>(
    method: string,
    params: unknown,
    options: StreamRequestOptions<D>,
  ): Promise<R> {
    const count = this.deltaMethods.get(options.deltaMethod) ?? 0;
    this.deltaMethods.set(options.deltaMethod, count + 1);
    const release = () => {
      const left = (this.deltaMethods.get(options.deltaMethod) ?? 1) - 1;
      if (left <= 0) this.deltaMethods.delete(options.deltaMethod);
      else this.deltaMethods.set(options.deltaMethod, left);
    };
    const promise = this.send<R>(method, params, options, options.onDelta as (p: unknown) => void);
    promise.then(release, release);
    return promise;
  }

  /** Sends a notification. Resolves once the frame is handed to the stream. */
  notify(method: string, params?: unknown): Promise<void> {
    if (this.closeInfo) return Promise.reject(new ConnectionClosedError(this.closeInfo.reason));
    const frame = params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
    return this.writer.write(frame);
  }

  /** Outgoing requests still waiting for their reply. */
  get pendingRequests(): number {
    return this.pending.size;
  }

  /** Incoming requests whose handler is still running. */
  get runningHandlers(): number {
    return this.running.size;
  }

  get isClosed(): boolean {
    return this.closeInfo !== undefined;
  }

  /** Frames queued behind backpressure. */
  get queuedFrames(): number {
    return this.writer.queuedFrames;
  }

  /**
   * Closes the connection: pending requests fail with ConnectionClosedError, running handlers
   * are aborted, input is no longer read, and (by default) the output is ended.
   */
  close(reason = "closed by this side"): void {
    if (this.closeInfo) return;
    this.closeInfo = { reason };
    this.input.off("data", this.onData);
    this.input.off("end", this.onInputEnd);
    this.input.off("close", this.onInputClose);
    const error = new ConnectionClosedError(reason);
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      this.settle(entry);
      entry.reject(error);
    }
    for (const request of this.running) request.abort(error);
    this.running.clear();
    this.writer.close(error);
    if (this.endOutputOnClose && !this.output.writableEnded && !this.output.destroyed) {
      this.output.end();
    }
    this.resolveClosed(this.closeInfo);
  }

  private send<R>(
    method: string,
    params: unknown,
    options: RequestOptions,
    onDelta: ((params: unknown) => void) | undefined,
  ): Promise<R> {
    if (this.closeInfo) return Promise.reject(new ConnectionClosedError(this.closeInfo.reason));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));

    const id = this.nextId();
    const frame =
      params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
    let json: string;
    try {
      json = this.writer.serialize(frame);
    } catch (error) {
      return Promise.reject(error);
    }

    return new Promise<R>((resolve, reject) => {
      const entry: Pending = {
        method,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer: undefined,
        signal,
        onAbort: undefined,
        onDelta,
      };
      const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        entry.timer = setTimeout(() => {
          if (this.pending.get(id) !== entry) return;
          this.pending.delete(id);
          this.settle(entry);
          reject(new TimeoutError(method, timeoutMs));
        }, timeoutMs);
      }
      if (signal) {
        entry.onAbort = () => {
          if (this.pending.get(id) !== entry) return;
          this.pending.delete(id);
          this.settle(entry);
          reject(new RequestCancelledError(method, signal.reason));
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.pending.set(id, entry);
      this.writer.writeLine(json).catch((error: Error) => {
        if (this.pending.get(id) !== entry) return;
        this.pending.delete(id);
        this.settle(entry);
        reject(error);
      });
    });
  }

  private settle(entry: Pending): void {
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener("abort", entry.onAbort);
  }

  // --- incoming -------------------------------------------------------------------------------

  private readonly onData = (chunk: Buffer | string): void => {
    this.decoder.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
  };

  private readonly onInputEnd = (): void => {
    this.decoder.end();
    this.close("input ended");
  };

  private readonly onInputClose = (): void => {
    this.close("input closed");
  };

  private readonly onInputError = (error: Error): void => {
    this.logger.warn({ peer: this.name, err: error.message }, "input stream error");
    this.close(`input error: ${error.message}`);
  };

  private readonly onOutputError = (error: Error): void => {
    this.logger.warn({ peer: this.name, err: error.message }, "output stream error");
    this.close(`output error: ${error.message}`);
  };

  private onFrameProblem(problem: FrameProblem): void {
    this.logger.warn({ peer: this.name, ...problem }, "dropped an unusable frame");
    this.onProblem?.(problem);
    if (this.malformedPolicy === "reply") {
      const error =
        problem.kind === "oversize"
          ? new InvalidRequestError(
              `frame of ${problem.bytes} bytes exceeds the ${problem.maxBytes}-byte limit`,
              {
                bytes: problem.bytes,
                max_bytes: problem.maxBytes,
              },
            )
          : new ParseError("frame is not valid UTF-8");
      this.replyError(null, error);
    }
  }

  private onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      this.malformed(new ParseError("parse error", { detail: (error as Error).message }), null, {
        kind: "parse_error",
        detail: (error as Error).message,
      });
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      const detail = Array.isArray(message) ? "batches are not supported" : "a message must be a JSON object";
      this.malformed(new InvalidRequestError(detail), null, { kind: "invalid_request", detail });
      return;
    }
    const msg = message as Record<string, unknown>;
    const method = msg.method;
    if (typeof method === "string") {
      if (!("id" in msg) || msg.id === undefined) {
        this.dispatchNotification(method, msg.params);
        return;
      }
      const id = msg.id;
      if (id !== null && typeof id !== "string" && typeof id !== "number") {
        const detail = "id must be a string, a number or null";
        this.malformed(new InvalidRequestError(detail), null, { kind: "invalid_request", detail });
        return;
      }
      this.dispatchRequest(id, method, msg.params);
      return;
    }
    if ("id" in msg && ("result" in msg || "error" in msg)) {
      this.dispatchResponse(msg);
      return;
    }
    const validId = typeof msg.id === "string" || typeof msg.id === "number" ? msg.id : null;
    const detail = "neither a request, a notification nor a response";
    this.malformed(new InvalidRequestError(detail), validId, { kind: "invalid_request", detail });
  }

  private malformed(error: RpcError, id: JsonRpcId | null, problem: ProtocolProblem): void {
    this.logger.warn({ peer: this.name, ...problem }, "malformed message");
    this.onProblem?.(problem);
    if (this.malformedPolicy === "reply") this.replyError(id, error);
  }

  private dispatchResponse(msg: Record<string, unknown>): void {
    const id = msg.id as JsonRpcId;
    const entry = this.pending.get(id);
    if (!entry) {
      this.logger.warn({ peer: this.name, id }, "response for an unknown or expired request id");
      this.onProblem?.({ kind: "unknown_response_id", id });
      return;
    }
    this.pending.delete(id);
    this.settle(entry);
    if (msg.error !== undefined && msg.error !== null) {
      entry.reject(RpcError.fromObject(msg.error, this.errorProtocol));
    } else {
      entry.resolve(msg.result);
    }
  }

  private dispatchNotification(method: string, params: unknown): void {
    if (this.deltaMethods.has(method)) {
      const requestId = (params as { request_id?: unknown } | null | undefined)?.request_id;
      const entry =
        typeof requestId === "number" || typeof requestId === "string"
          ? this.pending.get(requestId)
          : undefined;
      if (entry?.onDelta) {
        try {
          entry.onDelta(params);
        } catch (error) {
          this.logger.error(
            { peer: this.name, method, err: (error as Error).message },
            "delta handler threw",
          );
        }
        return;
      }
      if (!this.notificationHandlers.has(method)) {
        this.logger.warn({ peer: this.name, method, requestId }, "delta for no pending stream dropped");
        this.onProblem?.({ kind: "orphan_delta", method, requestId });
        return;
      }
    }
    const handler = this.notificationHandlers.get(method) ?? this.fallbackNotification;
    if (!handler) {
      this.logger.debug({ peer: this.name, method }, "notification without handler ignored");
      return;
    }
    try {
      const result = handler(params, method);
      if (result && typeof (result as Promise<void>).then === "function") {
        (result as Promise<void>).catch((error: Error) => this.logHandlerError(method, error));
      }
    } catch (error) {
      this.logHandlerError(method, error as Error);
    }
  }

  private logHandlerError(method: string, error: Error): void {
    this.logger.error({ peer: this.name, method, err: error?.message }, "notification handler failed");
  }

  private dispatchRequest(id: JsonRpcId | null, method: string, params: unknown): void {
    const handler = this.requestHandlers.get(method);
    const fallback = handler ? undefined : this.fallbackRequest;
    if (!handler && !fallback) {
      this.replyError(id, MethodNotFoundError.forMethod(method));
      return;
    }
    const ctx = new IncomingRequest(this, id, method);
    this.running.add(ctx);
    let outcome: unknown;
    try {
      outcome = handler ? handler(params, ctx) : fallback!(method, params, ctx);
    } catch (error) {
      this.running.delete(ctx);
      this.replyError(id, toRpcError(error));
      return;
    }
    if (
      outcome !== null &&
      typeof outcome === "object" &&
      typeof (outcome as Promise<unknown>).then === "function"
    ) {
      (outcome as Promise<unknown>).then(
        (result) => {
          this.running.delete(ctx);
          this.replyResult(id, result);
        },
        (error: unknown) => {
          this.running.delete(ctx);
          this.replyError(id, toRpcError(error));
        },
      );
    } else {
      this.running.delete(ctx);
      this.replyResult(id, outcome);
    }
  }

  private replyResult(id: JsonRpcId | null, result: unknown): void {
    if (this.closeInfo) return;
    this.writer
      .write({ jsonrpc: "2.0", id, result: result === undefined ? null : result })
      .catch((error: Error) => {
        this.logger.error({ peer: this.name, id, err: error.message }, "could not send a result");
        // The result could not be serialized or is too large: the caller must still get an answer.
        if (!(error instanceof ConnectionClosedError)) this.replyError(id, new InternalError(error.message));
      });
  }

  private replyError(id: JsonRpcId | null, error: RpcError): void {
    if (this.closeInfo) return;
    this.writer.write({ jsonrpc: "2.0", id, error: error.toJSON() }).catch((writeError: Error) => {
      if (writeError instanceof ConnectionClosedError) return;
      this.logger.error({ peer: this.name, id, err: writeError.message }, "could not send an error reply");
      this.writer
        .write({ jsonrpc: "2.0", id, error: { code: error.code, message: error.message } })
        .catch(() => undefined);
    });
  }
}

/**
 * The context of one incoming request. Its AbortController is created only when a handler asks
 * for the signal: creating one per request cost about a tenth of the echo benchmark's CPU.
 */
class IncomingRequest implements RequestContext {
  private controller: AbortController | undefined;
  private abortedWith: Error | undefined;

  constructor(
    private readonly peer: JsonRpcPeer,
    readonly id: JsonRpcId | null,
    readonly method: string,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.abortedWith = reason;
    this.controller?.abort(reason);
  }

  sendDelta(method: string, params: Record<string, unknown>): Promise<void> {
    return this.peer.notify(method, { request_id: this.id, ...params });
  }
}

/** Any thrown value as an RpcError: typed errors keep their code, anything else is -32603. */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof Error) return new InternalError(error.message || error.name);
  return new InternalError(String(error));
}

function makeIdGenerator(strategy: IdStrategy): () => JsonRpcId {
  if (typeof strategy === "function") return strategy;
  if (strategy === "integer") {
    let next = 0;
    return () => ++next;
  }
  if (strategy === "uuid") return () => randomUUID();
  const prefix = strategy.prefix;
  return () => `${prefix}${randomUUID()}`;
}

export { JsonRpcCode };
