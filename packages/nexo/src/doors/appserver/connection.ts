/**
 * One client connection (a stdio pair or a WebSocket) and its state machine:
 *
 *   new ──initialize──▶ awaitingInitialized ──initialized──▶ ready ──▶ closed
 *
 * - before `initialize`, every request is refused with -32002 (`initialize` itself is the way out);
 * - a second `initialize` is -32003;
 * - between the `initialize` response and the `initialized` notification, requests get -32600
 *   ("awaiting initialized"), as the reference does, and nothing is pushed to the client;
 * - more than `maxConcurrentRequests` requests in flight at once get -32001 ("Server overloaded;
 *   retry later.") — a gate per connection, so one busy client cannot starve another;
 * - params that break a method's schema get -32602 with the issues in `data.detail`; unknown
 *   fields are kept and ignored; a missing params object counts as `{}`.
 *
 * Everything the server pushes goes through `notify`, which applies the client's declared
 * capabilities (delivery-filter.ts); everything the connection sends — responses and requests too —
 * leaves through its bounded, ordered outbox (outbox.ts), which sits under the peer.
 */
import {
  Caller,
  ConnectionClosedError,
  Dispatcher,
  type DispatcherOptions,
  formatIssues,
  type JsonRpcPeer,
  type ParamsIn,
  type RequestTable,
} from "@nexo/wire";
import {
  type AppServerNotificationName,
  type AppServerNotificationParams,
  type AppServerServerRequestName,
  type AppServerServerRequestResult,
  appServerMethods,
  appServerServerRequests,
  type ClientInfo,
  type InitializeParams,
  type InitializeResult,
} from "@nexo/wire/schemas/appserver";
import type { Logger } from "../../log.js";
import {
  DeliveryFilter,
  type EffectiveClientCapabilities,
  effectiveCapabilities,
} from "./delivery-filter.js";
import { appServerErrors } from "./errors.js";
import type { Outbox } from "./outbox.js";

export type ConnectionPhase = "new" | "awaitingInitialized" | "ready" | "closed";

export type ConnectionKind = "stdio" | "websocket";

export interface ConnectionOptions {
  id: number;
  kind: ConnectionKind;
  peer: JsonRpcPeer;
  /** The answer to `initialize`: server info and capabilities. */
  initializeResult: () => InitializeResult;
  logger: Logger;
  /** Ends the connection from this side (a WebSocket closes with 1008 on overflow). */
  abort: (reason: string) => void;
  /** The queue under `peer` (host.ts puts it there); read here for its counters. */
  outbox: Outbox;
  /** Requests in flight at once before -32001. Default 64. */
  maxConcurrentRequests?: number;
  /** How long a server→client request (an approval) waits by default. */
  serverRequestTimeoutMs?: number;
  /** The external channel whose adapter process the server started and speaks to here. */
  spawnedFor?: string;
  /**
   * The client's `initialize`, already answered before this connection existed (`nexo app-server`'s
   * fast start answers the first line itself while the door loads): the connection starts as if it
   * had handled that request — awaiting `initialized`, a second `initialize` is -32003.
   */
  initialized?: InitializeParams;
}

export const DEFAULT_MAX_CONCURRENT_REQUESTS = 64;

const ignore = (): void => undefined;

export class AppServerConnection {
  readonly id: number;
  readonly kind: ConnectionKind;
  readonly peer: JsonRpcPeer;
  /** The external channel whose adapter process the server started; undefined for other clients. */
  readonly spawnedFor: string | undefined;
  private phaseNow: ConnectionPhase = "new";
  private info: ClientInfo | undefined;
  private caps: EffectiveClientCapabilities = effectiveCapabilities(undefined);
  private filterNow = new DeliveryFilter(this.caps);
  private readonly outbox: Outbox;
  private readonly calls: Caller<typeof appServerServerRequests>;
  private readonly logger: Logger;
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private readonly readyListeners: Array<() => void> = [];

  constructor(private readonly options: ConnectionOptions) {
    this.id = options.id;
    this.kind = options.kind;
    this.peer = options.peer;
    this.spawnedFor = options.spawnedFor;
    this.logger = options.logger;
    this.outbox = options.outbox;
    this.calls = new Caller(options.peer, { requests: appServerServerRequests });

    new Dispatcher<typeof appServerMethods>(
      this.peer,
      { requests: appServerMethods },
      this.dispatchOptions(),
    ).handle("initialize", (params) => this.initialize(params));
    // `initialized` carries nothing the server reads; some clients send it without params.
    this.peer.onNotification("initialized", () => {
      if (this.phaseNow !== "awaitingInitialized") return;
      this.phaseNow = "ready";
      for (const listener of this.readyListeners.splice(0)) listener();
    });
    this.peer.setFallbackRequestHandler((method) => {
      if (this.phaseNow === "new") throw appServerErrors.notInitialized(method);
      if (this.phaseNow === "awaitingInitialized") throw appServerErrors.awaitingInitialized(method);
      throw appServerErrors.methodNotFound(method);
    });
    void this.peer.closed.then((info) => {
      this.phaseNow = "closed";
      for (const listener of this.closeListeners.splice(0)) listener(info.reason);
    });
    if (options.initialized !== undefined) this.takeHandshake(options.initialized);
  }

  get phase(): ConnectionPhase {
    return this.phaseNow;
  }

  /** The client's `clientInfo`, once it has initialized. */
  get clientInfo(): ClientInfo | undefined {
    return this.info;
  }

  get capabilities(): EffectiveClientCapabilities {
    return this.caps;
  }

  get filter(): DeliveryFilter {
    return this.filterNow;
  }

  /** Deltas merged into earlier ones because this connection read too slowly (outbox.ts). */
  get coalescedDeltas(): number {
    return this.outbox.coalescedDeltas;
  }

  /** Calls `listener` once the handshake is done (`initialized` received); at once if it is. */
  onReady(listener: () => void): void {
    if (this.phaseNow === "ready") listener();
    else if (this.phaseNow !== "closed") this.readyListeners.push(listener);
  }

  /** Calls `listener` once when the connection has closed. */
  onClose(listener: (reason: string) => void): void {
    if (this.phaseNow === "closed") listener("closed");
    else this.closeListeners.push(listener);
  }

  /**
   * Pushes a notification if this connection is ready and wants it; returns whether it was queued.
   * Never waits: a slow client gets its deltas merged, then loses its connection (outbox.ts).
   */
  notify<M extends AppServerNotificationName>(method: M, params: AppServerNotificationParams<M>): boolean {
    if (this.phaseNow !== "ready" || this.peer.isClosed) return false;
    if (!this.filterNow.allows(method, params)) return false;
    // A send to a closed connection rejects; the connection's end is handled where it closes.
    this.peer.notify(method, params).catch(ignore);
    return true;
  }

  /** Sends a server→client request (an approval) and resolves with the checked reply. */
  request<M extends AppServerServerRequestName>(
    method: M,
    params: ParamsIn<typeof appServerServerRequests, M>,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<AppServerServerRequestResult<M>> {
    if (this.peer.isClosed) return Promise.reject(new ConnectionClosedError("connection closed"));
    return this.calls.request(method, params, {
      timeoutMs: options.timeoutMs ?? this.options.serverRequestTimeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Ends the connection from this side. */
  abort(reason: string): void {
    if (this.peer.isClosed) return;
    this.logger.warn({ connection: this.id, reason }, "closing an AppServer connection");
    this.options.abort(reason);
  }

  private initialize(params: InitializeParams) {
    this.takeHandshake(params);
    return this.options.initializeResult();
  }

  /** The client's `initialize` params become this connection's state; the answer is sent elsewhere. */
  private takeHandshake(params: InitializeParams): void {
    this.info = params.clientInfo;
    this.caps = effectiveCapabilities(params.capabilities);
    this.filterNow = new DeliveryFilter(this.caps);
    this.phaseNow = "awaitingInitialized";
    this.logger.debug(
      { connection: this.id, client: params.clientInfo.name, version: params.clientInfo.version },
      "AppServer client initialized",
    );
  }

  /**
   * The rules every method of this connection is dispatched under (handshake, overload, params):
   * pass them to each Dispatcher serving this connection's peer.
   */
  dispatchOptions<T extends RequestTable>(): DispatcherOptions<T> {
    return {
      missingParams: {},
      invalidParams: (_method, issues) => appServerErrors.invalidParams(formatIssues(issues, "(params)")),
      guard: (method) => {
        if (method === "initialize") {
          if (this.phaseNow !== "new") throw appServerErrors.alreadyInitialized();
          return;
        }
        if (this.phaseNow === "new") throw appServerErrors.notInitialized(method);
        if (this.phaseNow === "awaitingInitialized") throw appServerErrors.awaitingInitialized(method);
        const max = this.options.maxConcurrentRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS;
        // The running count includes this request.
        if (this.peer.runningHandlers > max) throw appServerErrors.overloaded(max);
      },
    };
  }
}
