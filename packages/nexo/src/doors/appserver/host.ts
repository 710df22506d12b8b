/**
 * The AppServer: every connection, whatever carries it (stdio, WebSocket), the method families they
 * are served, and the workspace-wide broadcasts. Listeners hand it transports; families reach the
 * services they translate (threads, turns) through it.
 */
import { JsonRpcPeer, type MessageTransport } from "@nexo/wire";
import type {
  AppServerNotificationName,
  AppServerNotificationParams,
  InitializeParams,
  InitializeResult,
  ServerCapabilities,
} from "@nexo/wire/schemas/appserver";
import type { Logger } from "../../log.js";
import {
  ChannelAdapterConnections,
  type ChannelSink,
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
} from "./channel-adapters.js";
import type { ChannelProcesses } from "./channel-processes.js";
import { AppServerConnection, type ConnectionKind } from "./connection.js";
import type { AppServerManagement } from "./management.js";
import { type Corkable, Outbox, type OutboxLimits } from "./outbox.js";
import type { ThreadService } from "./threads/service.js";

/** The wire protocol's own version, independent of nexo's. */
export const PROTOCOL_VERSION = "1";

/** How long a server→client request waits by default (approvals set their own timeout). */
const SERVER_REQUEST_TIMEOUT_MS = 30_000;

/** The largest message accepted from a client (the reference's WebSocket cap). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface AppServerHostOptions {
  /** nexo's version, sent in `serverInfo`. */
  version: string;
  /** The workspace threads default to. */
  workspace: string;
  /**
   * Every thread works in `workspace`, whatever `workspacePath` a client names (the daemon's door:
   * the operator chose the agent's directory). Default false: a thread works where it was started.
   */
  workspacePinned?: boolean | undefined;
  logger: Logger;
  /** Threads and turns, over the session store and the engine. */
  threads: ThreadService;
  /** The services the management families call; absent: those families are off (management.ts). */
  management?: AppServerManagement | undefined;
  /** Registers the method families' handlers on a new connection. */
  serve: (connection: AppServerConnection) => void;
  /** The server capability flags of what is served. */
  capabilities: () => ServerCapabilities;
  outbox?: OutboxLimits;
  maxConcurrentRequests?: number;
  /** Where channel adapter connections are registered as channels (the daemon's registry). */
  channels?: ChannelSink | undefined;
  /** How often adapter connections are probed with `ext/channel/heartbeat` (timeout: a third, ≤ 10 s). */
  channelHeartbeatMs?: number | undefined;
}

export interface AcceptOptions {
  kind: ConnectionKind;
  /** Ends the connection from this side; a WebSocket listener closes with the given reason. */
  abort?: (reason: string) => void;
  /** The external channel whose adapter process this server started (channel-processes.ts). */
  spawnedFor?: string;
  /** The stream under the transport, corked per tick so a tick's messages leave in one write. */
  stream?: Corkable | undefined;
  /** How long the transport may take nothing while messages wait before the client is dropped. */
  stallMs?: number | undefined;
  /** The client's `initialize`, answered before the connection was handed over (connection.ts). */
  initialized?: InitializeParams | undefined;
}

export class AppServerHost {
  readonly version: string;
  readonly workspace: string;
  readonly workspacePinned: boolean;
  readonly logger: Logger;
  readonly threads: ThreadService;
  readonly management: AppServerManagement | undefined;
  /** Connections that declared `channelAdapter`, by channel name. */
  readonly channelAdapters: ChannelAdapterConnections;
  /** The adapter processes of subprocess external channels; only with a config directory. */
  private channelProcesses: ChannelProcesses | undefined;
  private readonly live = new Set<AppServerConnection>();
  private nextConnectionId = 1;
  private closing = false;

  constructor(private readonly options: AppServerHostOptions) {
    this.version = options.version;
    this.workspace = options.workspace;
    this.workspacePinned = options.workspacePinned ?? false;
    this.logger = options.logger;
    this.threads = options.threads;
    this.management = options.management;
    const heartbeatMs = options.channelHeartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.channelAdapters = new ChannelAdapterConnections({
      logger: options.logger,
      sink: options.channels,
      // Loaded on the first adapter: what it reads (the config) stays off a plain server's start-up.
      gate: async (name, connection) =>
        (await import("./external-channels.js")).rejection(this.management?.services, name, {
          spawnedFor: connection.spawnedFor,
        }),
      heartbeatMs,
      heartbeatTimeoutMs: Math.min(DEFAULT_HEARTBEAT_TIMEOUT_MS, Math.max(1, Math.floor(heartbeatMs / 3))),
    });
  }

  /** Connections open now, in the order they came. */
  get connections(): ReadonlySet<AppServerConnection> {
    return this.live;
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** Serves one client over `transport` until it closes. */
  accept(transport: MessageTransport, accept: AcceptOptions): AppServerConnection {
    const id = this.nextConnectionId++;
    // The outbox is under the peer, the connection over it: it reaches the connection once built.
    let overflowed: AppServerConnection | undefined;
    const outbox = new Outbox(transport, {
      ...this.options.outbox,
      ...(accept.stallMs === undefined ? {} : { stallMs: accept.stallMs }),
      stream: accept.stream,
      onOverflow: (reason) => overflowed?.abort(reason),
    });
    const peer = new JsonRpcPeer({
      transport: outbox,
      name: `appserver#${id}`,
      malformed: "reply",
      logger: this.logger,
      requestTimeoutMs: SERVER_REQUEST_TIMEOUT_MS,
    });
    const connection = new AppServerConnection({
      id,
      kind: accept.kind,
      peer,
      initializeResult: () => this.initializeResult(),
      logger: this.logger,
      abort: accept.abort ?? ((reason) => peer.close(reason)),
      ...(accept.spawnedFor === undefined ? {} : { spawnedFor: accept.spawnedFor }),
      ...(accept.initialized === undefined ? {} : { initialized: accept.initialized }),
      outbox,
      ...(this.options.maxConcurrentRequests === undefined
        ? {}
        : { maxConcurrentRequests: this.options.maxConcurrentRequests }),
    });
    overflowed = connection;
    this.options.serve(connection);
    this.channelAdapters.attach(connection);
    this.live.add(connection);
    connection.onClose((reason) => {
      this.live.delete(connection);
      this.logger.debug({ connection: id, reason }, "AppServer connection closed");
    });
    if (this.closing) connection.abort("the server is shutting down");
    return connection;
  }

  initializeResult(): InitializeResult {
    return {
      serverInfo: { name: "nexo", version: this.version, protocolVersion: PROTOCOL_VERSION },
      capabilities: this.options.capabilities(),
    };
  }

  /** Sends a workspace-wide notification to every ready connection (each filters by its own wishes). */
  broadcast<M extends AppServerNotificationName>(
    method: M,
    params: AppServerNotificationParams<M>,
    options: { except?: AppServerConnection } = {},
  ): void {
    for (const connection of this.live) {
      if (connection !== options.except) connection.notify(method, params);
    }
  }

  /** Starts the adapter processes of the subprocess external channels (none without a config). */
  async startChannelProcesses(): Promise<void> {
    const services = this.management?.services;
    if (services === undefined || this.closing) return;
    const { ChannelProcesses } = await import("./channel-processes.js");
    this.channelProcesses ??= new ChannelProcesses({
      services,
      workspace: this.workspace,
      logger: this.logger,
      accept: (transport, channel) => this.accept(transport, { kind: "stdio", spawnedFor: channel }),
    });
    await this.channelProcesses.reconcile();
  }

  /**
   * The external channels changed (externalChannel/*): adapter processes follow the file, and
   * connected adapters whose channel is gone or disabled are refused and closed.
   */
  async externalChannelsChanged(): Promise<void> {
    await this.channelProcesses?.reconcile();
    await this.channelAdapters.recheck();
  }

  /** Refuses new connections, closes the open ones and stops the adapter processes. */
  async close(reason: string): Promise<void> {
    this.closing = true;
    for (const connection of [...this.live]) connection.abort(reason);
    await this.channelProcesses?.close();
  }
}
