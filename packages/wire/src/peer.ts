/**
 * A bidirectional JSON-RPC 2.0 peer over a message transport (transport.ts): a child's stdio as
 * JSON lines, or a WebSocket. Both ends of every nexo connection use it: the host towards plugins
 * and microapps, the SDK inside them, the doors towards UIs.
 *
 * Rules (docs/architecture.md, "The wire layer"):
 * - incoming requests are dispatched concurrently; the reader never waits for a handler;
 * - every outgoing request has a timeout and can be cancelled with an AbortSignal;
 * - when the connection ends, every pending request fails at once with ConnectionClosedError and
 *   every running handler sees its signal aborted;
 * - malformed input is either answered (-32700/-32600 with id null) or logged and ignored.
 */
import { randomUUID } from "node:crypto";
import {
  ConnectionClosedError,
  type ErrorProtocol,
  InternalError,
  InvalidRequestError,
  JsonRpcCode,
  MethodNotFoundError,
  RequestCancelledError,
  RpcError,
  TimeoutError,
  toRpcError,
} from "./errors.js";
import { ACCEPTED } from "./framing.js";
import { IncomingRequest, problemError, RunningRequests } from "./incoming-request.js";
import { JsonText } from "./json-text.js";
import { LineTransport } from "./line-transport.js";
import { monotonicMs } from "./monotonic.js";
import type {
  FallbackRequestHandler,
  IdStrategy,
  JsonRpcId,
  MalformedPolicy,
  NotificationHandler,
  PeerLogger,
  PeerOptions,
  ProtocolProblem,
  RequestHandler,
  RequestOptions,
  StreamPeerOptions,
  StreamRequestOptions,
} from "./peer-types.js";
import { isThenable } from "./thenable.js";
import type { CloseInfo, MessageTransport, TransportProblem, TransportSink } from "./transport.js";

export type * from "./peer-types.js";
export type { CloseInfo } from "./transport.js";

/** An outgoing request waiting for its reply. */
class Pending {
  resolve: (value: unknown) => void = settledAlready;
  reject: (error: Error) => void = settledAlready;
  /** Its own abort listener, when another signal holds the shared one (see watchedSignal). */
  onAbort: (() => void) | undefined = undefined;

  constructor(
    readonly method: string,
    /** monotonicMs() past which the request times out; Infinity without a timeout. */
    readonly deadline: number,
    readonly timeoutMs: number,
    readonly signal: AbortSignal | undefined,
    readonly onDelta: ((params: unknown) => void) | undefined,
  ) {}
}

function settledAlready(): void {}

/**
 * The executor of every request's promise: it hands the promise's resolve and reject to the
 * Pending entry the send just made (`capturing`). One function for all requests, where an arrow
 * per request cost a closure and its context each time; the Promise constructor calls its
 * executor synchronously, so nothing can run between setting `capturing` and reading it.
 */
let capturing: Pending | undefined;
function captureSettlers(resolve: (value: unknown) => void, reject: (error: Error) => void): void {
  capturing!.resolve = resolve;
  capturing!.reject = reject;
}

const noopLogger: PeerLogger = { debug() {}, warn() {}, error() {} };

export class JsonRpcPeer {
  readonly name: string;
  private readonly transport: MessageTransport;
  private readonly logger: PeerLogger;
  private readonly malformedPolicy: MalformedPolicy;
  private readonly errorProtocol: ErrorProtocol;
  private readonly defaultTimeoutMs: number;
  private readonly nextId: () => JsonRpcId;
  private readonly onProblem: ((problem: ProtocolProblem) => void) | undefined;

  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly running = new RunningRequests();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly deltaMethods = new Map<string, number>();
  private fallbackRequest: FallbackRequestHandler | undefined;
  private fallbackNotification: NotificationHandler | undefined;

  /**
   * One timer for every pending request's timeout, set for the earliest deadline: a request in
   * flight costs a deadline, not a timer of its own (creating and clearing one per request was
   * ~5% of the echo benchmark's client CPU at 16 in flight). When the last timed request settles
   * the timer stays set but unref'd (it no longer keeps the process alive), and the next request
   * refs it again: one request at a time would otherwise create and clear a timer per request,
   * ~5% of the plugin host's CPU per call. Set for a deadline already met, it fires, finds
   * nothing due and sets itself for the next deadline, if any. Cleared when the peer closes.
   */
  private timeoutTimer: NodeJS.Timeout | undefined;
  private timeoutTimerAt = Number.POSITIVE_INFINITY;
  private timedRequests = 0;

  /**
   * The signal that one shared abort listener watches, and how many pending requests it cancels.
   * The calls of one turn share its signal: adding and removing an abort listener per request was
   * ~2% of the plugin host's CPU per tool call. The listener stays on the last signal when its
   * requests have settled (the next request often brings the same one) and moves when a request
   * brings another; while the watched signal still has requests pending, a request with another
   * signal gets a listener of its own, as before. Removed when the peer closes. Held weakly: an
   * idle peer must not keep a finished turn's signal (and whatever its other listeners hold) alive.
   */
  private watchedSignal: WeakRef<AbortSignal> | undefined;
  /** The request envelope's middle for the last method sent with JsonText params. */
  private lastHead: { method: string; text: string } | undefined;
  private watchedRequests = 0;

  private closeInfo: CloseInfo | undefined;
  private resolveClosed!: (info: CloseInfo) => void;
  /** Resolves once, when the connection has closed for whatever reason. */
  readonly closed: Promise<CloseInfo>;

  /** A peer speaking JSON lines over a stream pair, e.g. a child's stdout and stdin. */
  static overStreams(options: StreamPeerOptions): JsonRpcPeer {
    return new JsonRpcPeer({ ...options, transport: new LineTransport(options) });
  }

  constructor(options: PeerOptions) {
    this.name = options.name ?? "peer";
    this.transport = options.transport;
    this.logger = options.logger ?? noopLogger;
    this.malformedPolicy = options.malformed ?? "ignore";
    this.errorProtocol = options.errorProtocol ?? "generic";
    this.defaultTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.nextId = makeIdGenerator(options.ids ?? "integer");
    this.onProblem = options.onProtocolProblem;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.transport.start(this.sink);
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

  /** Removes `method`'s request handler if it is still `handler`; the method then answers -32601. */
  removeRequestHandler(method: string, handler: RequestHandler): void {
    if (this.requestHandlers.get(method) === handler) this.requestHandlers.delete(method);
  }

  /** Removes `method`'s notification handler if it is still `handler`. */
  removeNotificationHandler(method: string, handler: NotificationHandler): void {
    if (this.notificationHandlers.get(method) === handler) this.notificationHandlers.delete(method);
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

  /**
   * Sends a request and resolves with its result, or rejects with a typed error. `params` may be a
   * JsonText (what JSON.stringify gave for them): its text goes into the frame as it is.
   */
  request<R = unknown>(method: string, params?: unknown, options?: RequestOptions): Promise<R> {
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
    return this.transport.send(frame);
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

  /** Messages queued behind backpressure. */
  get queuedFrames(): number {
    return this.transport.queuedMessages;
  }

  /**
   * Closes the connection: pending requests fail with ConnectionClosedError, running handlers
   * are aborted, input is no longer read, and the transport ends the connection (a line transport
   * ends its output unless told not to; a WebSocket sends a close frame).
   */
  close(reason = "closed by this side"): void {
    this.shutDown({ reason });
  }

  private shutDown(info: CloseInfo): void {
    if (this.closeInfo) return;
    this.closeInfo = info;
    const reason = info.reason;
    const error = new ConnectionClosedError(reason);
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      this.settle(entry);
      entry.reject(error);
    }
    this.disarmTimeouts();
    this.watch(undefined);
    this.running.abortAll(error);
    this.transport.close(reason);
    this.resolveClosed(info);
  }

  private send<R>(
    method: string,
    params: unknown,
    options: RequestOptions | undefined,
    onDelta: ((params: unknown) => void) | undefined,
  ): Promise<R> {
    if (this.closeInfo) return Promise.reject(new ConnectionClosedError(this.closeInfo.reason));
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));

    const id = this.nextId();
    const frame =
      params instanceof JsonText
        ? undefined
        : params === undefined
          ? { jsonrpc: "2.0", id, method }
          : { jsonrpc: "2.0", id, method, params };
    const timeoutMs = options?.timeoutMs ?? this.defaultTimeoutMs;
    const timed = timeoutMs > 0 && Number.isFinite(timeoutMs);
    const deadline = timed ? monotonicMs() + timeoutMs : Number.POSITIVE_INFINITY;
    const entry = new Pending(method, deadline, timeoutMs, signal, onDelta);
    capturing = entry;
    const promise = new Promise<unknown>(captureSettlers) as Promise<R>;
    capturing = undefined;

    if (timed) {
      if (this.timedRequests++ === 0) this.timeoutTimer?.ref();
      if (deadline < this.timeoutTimerAt) this.armTimeouts(deadline);
    }
    if (signal) {
      if (signal === this.watchedSignal?.deref()) {
        this.watchedRequests++;
      } else if (this.watchedRequests === 0) {
        this.watch(signal);
        this.watchedRequests = 1;
      } else {
        // Another signal is watched for requests still pending: this one gets its own listener.
        this.listenForAbort(id, entry, signal);
      }
    }
    this.pending.set(id, entry);
    let sent: Promise<void>;
    try {
      sent =
        frame === undefined
          ? this.sendRequestText(id, method, params as JsonText)
          : this.transport.send(frame);
    } catch (error) {
      // A transport that throws instead of rejecting still fails only this request.
      this.fail(id, entry, error as Error);
      return promise;
    }
    if (sent !== ACCEPTED) this.failOnRejection(sent, id, entry);
    return promise;
  }

  // The closures a request may need are made in these helpers, not in send(): a closure in send()
  // would make V8 allocate a context for send's variables on every request, needed or not.

  private listenForAbort(id: JsonRpcId, entry: Pending, signal: AbortSignal): void {
    entry.onAbort = () => this.fail(id, entry, new RequestCancelledError(entry.method, signal.reason));
    signal.addEventListener("abort", entry.onAbort, { once: true });
  }

  private failOnRejection(sent: Promise<void>, id: JsonRpcId, entry: Pending): void {
    sent.catch((error: Error) => this.fail(id, entry, error));
  }

  /** Fails the request `id` with `error` if `entry` is still what it waits on. */
  private fail(id: JsonRpcId, entry: Pending, error: Error): void {
    if (this.pending.get(id) !== entry) return;
    this.pending.delete(id);
    this.settle(entry);
    entry.reject(error);
  }

  private settle(entry: Pending): void {
    if (entry.deadline !== Number.POSITIVE_INFINITY && --this.timedRequests === 0) this.timeoutTimer?.unref();
    if (entry.signal === undefined) return;
    if (entry.onAbort) entry.signal.removeEventListener("abort", entry.onAbort);
    else if (entry.signal === this.watchedSignal?.deref()) this.watchedRequests--;
  }

  /** Moves the shared abort listener to `signal` (see watchedSignal). */
  private watch(signal: AbortSignal | undefined): void {
    this.watchedSignal?.deref()?.removeEventListener("abort", this.onWatchedAbort);
    this.watchedSignal = signal === undefined ? undefined : new WeakRef(signal);
    signal?.addEventListener("abort", this.onWatchedAbort);
  }

  /** The watched signal aborted: every request it cancels fails (those with their own listener fail by it). */
  private readonly onWatchedAbort = (): void => {
    const signal = this.watchedSignal?.deref();
    if (signal === undefined) return;
    for (const [id, entry] of this.pending) {
      if (entry.signal !== signal || entry.onAbort !== undefined) continue;
      this.pending.delete(id);
      this.settle(entry);
      entry.reject(new RequestCancelledError(entry.method, signal.reason));
    }
  };

  private armTimeouts(at: number): void {
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.timeoutTimerAt = at;
    this.timeoutTimer = setTimeout(this.expireRequests, Math.max(1, Math.ceil(at - monotonicMs())));
  }

  private disarmTimeouts(): void {
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    this.timeoutTimer = undefined;
    this.timeoutTimerAt = Number.POSITIVE_INFINITY;
  }

  /** Fails every request past its deadline, then sets the timer for the next deadline. */
  private readonly expireRequests = (): void => {
    this.timeoutTimer = undefined;
    this.timeoutTimerAt = Number.POSITIVE_INFINITY;
    const now = monotonicMs();
    let next = Number.POSITIVE_INFINITY;
    for (const [id, entry] of this.pending) {
      if (entry.deadline <= now) {
        this.pending.delete(id);
        this.settle(entry);
        entry.reject(new TimeoutError(entry.method, entry.timeoutMs));
      } else if (entry.deadline < next) {
        next = entry.deadline;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.armTimeouts(next);
  };

  // --- incoming -------------------------------------------------------------------------------

  /** What the transport calls; the peer's only entry point for incoming traffic. */
  private readonly sink: TransportSink = {
    message: (value) => this.onMessage(value),
    problem: (problem) => this.onTransportProblem(problem),
    closed: (info, error) => {
      if (error) this.logger.warn({ peer: this.name, err: error.message }, "connection failed");
      this.shutDown(info);
    },
  };

  private onTransportProblem(problem: TransportProblem): void {
    this.reportProblem(problem, "dropped an unusable frame");
    if (this.malformedPolicy === "reply") this.replyError(null, problemError(problem));
  }

  /** Logs a problem and passes it to `onProtocolProblem`; layers above the peer report theirs here. */
  reportProblem(problem: ProtocolProblem, message = "protocol problem"): void {
    this.logger.warn({ peer: this.name, ...problem }, message);
    this.onProblem?.(problem);
  }

  private onMessage(message: unknown): void {
    if (this.closeInfo) return;
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
    this.reportProblem(problem, "malformed message");
    if (this.malformedPolicy === "reply") this.replyError(id, error);
  }

  private dispatchResponse(msg: Record<string, unknown>): void {
    const id = msg.id as JsonRpcId;
    const entry = this.pending.get(id);
    if (!entry) {
      this.reportProblem(
        { kind: "unknown_response_id", id },
        "response for an unknown or expired request id",
      );
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
        this.reportProblem(
          { kind: "orphan_delta", method, requestId },
          "delta for no pending stream dropped",
        );
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
    if (isThenable(outcome)) {
      this.replyWhenSettled(ctx, outcome);
    } else {
      this.running.delete(ctx);
      this.replyResult(id, outcome);
    }
  }

  /** Answers a handler's promise. Apart from dispatchRequest, whose synchronous path then makes no closure. */
  private replyWhenSettled(ctx: IncomingRequest, outcome: PromiseLike<unknown>): void {
    outcome.then(
      (result) => {
        this.running.delete(ctx);
        this.replyResult(ctx.id, result);
      },
      (error: unknown) => {
        this.running.delete(ctx);
        this.replyError(ctx.id, toRpcError(error));
      },
    );
  }

  private replyResult(id: JsonRpcId | null, result: unknown): void {
    if (this.closeInfo) return;
    const sent = this.sendResult(id, result);
    if (sent !== ACCEPTED) this.answerUnsent(id, sent);
  }

  /** Apart from replyResult, whose usual path then makes no closure (see listenForAbort). */
  private answerUnsent(id: JsonRpcId | null, sent: Promise<void>): void {
    sent.catch((error: Error) => {
      this.logger.error({ peer: this.name, id, err: error.message }, "could not send a result");
      // The result could not be serialized or is too large: the caller must still get an answer.
      if (!(error instanceof ConnectionClosedError)) this.replyError(id, new InternalError(error.message));
    });
  }

  /**
   * A request whose params are already JSON text: the same text JSON.stringify gives for the frame
   * object, with the params' text spliced in (the envelope is not walked again).
   */
  private sendRequestText(id: JsonRpcId, method: string, params: JsonText): Promise<void> {
    if (this.transport.sendSerialized) {
      const head = this.requestHead(method);
      return this.transport.sendSerialized(
        `{"jsonrpc":"2.0","id":${Number.isSafeInteger(id) ? id : JSON.stringify(id)},${head}${params.json}}`,
      );
    }
    return this.transport.send({ jsonrpc: "2.0", id, method, params: JSON.parse(params.json) as unknown });
  }

  /** `"method":<method>,"params":`, kept for the last method (a hot path sends one method). */
  private requestHead(method: string): string {
    if (method !== this.lastHead?.method)
      this.lastHead = { method, text: `"method":${JSON.stringify(method)},"params":` };
    return this.lastHead.text;
  }

  private sendResult(id: JsonRpcId | null, result: unknown): Promise<void> {
    if (!(result instanceof JsonText)) {
      return this.transport.send({ jsonrpc: "2.0", id, result: result === undefined ? null : result });
    }
    // The same text JSON.stringify gives for the frame object, with the result's text spliced in.
    if (this.transport.sendSerialized) {
      return this.transport.sendSerialized(
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result.json}}`,
      );
    }
    return this.transport.send({ jsonrpc: "2.0", id, result: JSON.parse(result.json) as unknown });
  }

  private replyError(id: JsonRpcId | null, error: RpcError): void {
    if (this.closeInfo) return;
    this.transport.send({ jsonrpc: "2.0", id, error: error.toJSON() }).catch((writeError: Error) => {
      if (writeError instanceof ConnectionClosedError) return;
      this.logger.error({ peer: this.name, id, err: writeError.message }, "could not send an error reply");
      this.transport
        .send({ jsonrpc: "2.0", id, error: { code: error.code, message: error.message } })
        .catch(() => undefined);
    });
  }
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
