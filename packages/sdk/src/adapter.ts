/**
 * PluginAdapter: a plugin's whole side of the contract over stdio. The constructor validates the
 * manifest and the tool catalog; `run()` serves the host until shutdown, stdin EOF or a signal,
 * and resolves once the plugin's work has been drained. It never calls `process.exit`: a plugin
 * that keeps timers or sockets alive must close them in `onShutdown` (the host SIGKILLs a child
 * still alive 1 s after the ack).
 *
 * Shutdown, whatever triggered it (plugin contract §4.2, notes §5.10), follows lifecycle.ts: new
 * work refused, the plugin's pending calls to the host failed with RpcTransportError "adapter
 * shutting down", in-flight handlers drained within `shutdownDrainTimeoutMs`, `onShutdown`, then
 * the `{ok: true}` reply.
 */
import type { Writable } from "node:stream";
import { Dispatcher, JsonRpcPeer } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { abandonHostCalls, BrokerSender, setHostFeatures } from "./broker.js";
import { advertisedChannelFeatures } from "./channel-features.js";
import { checkToolCatalog, warnAboutUnmatchedDeclarations } from "./declarations.js";
import { PluginError, RpcTransportError } from "./errors.js";
import { Event } from "./event.js";
import { serveExtensionMethods } from "./handlers.js";
import { DEFAULT_RPC_TIMEOUT_MS } from "./host.js";
import { PeerLink } from "./host-link.js";
import { InflightTasks } from "./inflight.js";
import { AbandonedError, ChildLifecycle, positiveInteger } from "./lifecycle.js";
import { logHandlerFailure, logWarning, pluginLog, stderrLogger } from "./log.js";
import { type ParsedManifest, parseManifest } from "./manifest.js";
import { DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS, type PluginAdapterOptions } from "./options.js";
import { type DispatchEnv, logSchemaFailure } from "./serve.js";
import { createFrameOutput, installStdoutGuard } from "./stdout-guard.js";
import { serveTools, type ToolHandlers } from "./tool-dispatch.js";
import { toolDefToJson } from "./tools.js";
import { MAX_FRAME_BYTES } from "./wire.js";

export type { EventHandler, PluginAdapterOptions, ShutdownHandler } from "./options.js";

export class PluginAdapter {
  private readonly parsed: ParsedManifest;
  private readonly options: PluginAdapterOptions;
  private readonly initializeReply: Record<string, unknown>;
  private readonly toolHandler: ToolHandlers | undefined;
  private readonly drainTimeoutMs: number;
  private readonly maxFrameBytes: number;
  private readonly maxOutgoingFrameBytes: number;
  private readonly link = new PeerLink();
  private readonly brokerSender: BrokerSender;
  private readonly tasks = new InflightTasks();
  private readonly lifecycle: ChildLifecycle;

  private started = false;
  private finish: () => void = () => {};
  private nexoVersion: string | undefined;

  constructor(options: PluginAdapterOptions) {
    if (options === null || typeof options !== "object") {
      throw new PluginError("PluginAdapter needs an options object with at least `manifestToml`");
    }
    this.options = options;
    this.parsed = parseManifest(options.manifestToml);
    this.maxFrameBytes = positiveInteger("maxFrameBytes", options.maxFrameBytes, MAX_FRAME_BYTES);
    this.maxOutgoingFrameBytes = positiveInteger(
      "maxOutgoingFrameBytes",
      options.maxOutgoingFrameBytes,
      MAX_FRAME_BYTES,
    );
    this.drainTimeoutMs = positiveInteger(
      "shutdownDrainTimeoutMs",
      options.shutdownDrainTimeoutMs,
      DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS,
    );

    const tools = checkToolCatalog(options.tools ?? [], this.parsed);
    const { onTool, onToolWithContext } = options;
    this.toolHandler = onToolWithContext
      ? { withContext: onToolWithContext }
      : onTool
        ? { plain: onTool }
        : undefined;

    const { id, version } = this.parsed.plugin;
    const reply: Record<string, unknown> = {
      manifest: this.parsed.raw,
      server_version: options.serverVersion ?? `${id}-${version}`,
    };
    if (tools.length > 0) reply.tools = tools.map(toolDefToJson);
    const features = advertisedChannelFeatures(options.channelFeatures);
    if (features.length > 0) reply.channel_features = features;
    this.initializeReply = reply;

    this.brokerSender = new BrokerSender(this.link);
    this.lifecycle = new ChildLifecycle({
      kind: "plugin",
      tasks: this.tasks,
      drainTimeoutMs: this.drainTimeoutMs,
      log: pluginLog,
      onShutdown: options.onShutdown,
      abandonOwnCalls: () =>
        this.brokerSender[abandonHostCalls](new RpcTransportError("adapter shutting down")),
    });
    if (options.enableStdoutGuard !== false) installStdoutGuard();
  }

  /** The whole manifest document, as JSON. */
  get manifest(): Readonly<Record<string, unknown>> {
    return this.parsed.raw;
  }

  get pluginId(): string {
    return this.parsed.plugin.id;
  }

  /**
   * The handle on the host, also outside handlers (a channel publishing what it receives, a
   * background job recalling memory). Its calls fail with RpcTransportError until `run()`.
   */
  get broker(): BrokerSender {
    return this.brokerSender;
  }

  /** The `nexo_version` the host announced in `initialize`, once it has. */
  get hostNexoVersion(): string | undefined {
    return this.nexoVersion;
  }

  /** Serves the host until shutdown, stdin EOF or a signal. Once only. */
  async run(): Promise<void> {
    if (this.started) throw new PluginError("PluginAdapter.run() already invoked");
    this.started = true;

    const output = createFrameOutput();
    const peer = JsonRpcPeer.overStreams({
      input: process.stdin,
      output,
      name: `plugin:${this.pluginId}`,
      ids: "integer",
      requestTimeoutMs: DEFAULT_RPC_TIMEOUT_MS,
      maxFrameBytes: this.maxFrameBytes,
      maxOutgoingFrameBytes: this.maxOutgoingFrameBytes,
      strictJson: true,
      malformed: "ignore",
      errorProtocol: "plugin",
      logger: stderrLogger,
      endOutputOnClose: false,
      // Replies finished in one tick leave in one write (docs/performance.md, plugin tool.invoke).
      coalesce: true,
      // …at most 8 per write, so the host starts reading replies while the rest are produced.
      coalesceMaxFrames: 8,
    });
    this.link.peer = peer;
    const done = new Promise<void>((resolve) => {
      this.finish = resolve;
    });

    const dispatcher = new Dispatcher(
      peer,
      { requests: plugin.pluginMethods, notifications: plugin.pluginNotifications },
      { checkResults: true, onSchemaFailure: logSchemaFailure },
    );
    this.serveLifecycle(peer, dispatcher, output);
    const env: DispatchEnv = {
      peer,
      dispatcher,
      tasks: this.tasks,
      broker: this.brokerSender,
      pluginId: this.pluginId,
      isStopping: () => this.lifecycle.stopping,
    };
    if (this.toolHandler) serveTools(env, this.toolHandler, this.maxOutgoingFrameBytes);
    serveExtensionMethods(env, this.options);
    warnAboutUnmatchedDeclarations(this.parsed, this.options, this.toolHandler !== undefined);

    await this.lifecycle.serveUntilDone(peer, done, () => this.finish(), {
      handleSignals: this.options.handleProcessSignals !== false,
      closedError: (reason) => new RpcTransportError(`host connection closed: ${reason}`),
    });
  }

  private serveLifecycle(
    peer: JsonRpcPeer,
    dispatcher: Dispatcher<typeof plugin.pluginMethods, typeof plugin.pluginNotifications>,
    output: Writable,
  ): void {
    dispatcher.handle("initialize", (params) => {
      this.nexoVersion = params.nexo_version;
      this.brokerSender[setHostFeatures](params.host_features);
      return this.initializeReply as plugin.InitializeResult;
    });

    // Shutdown params are not validated: nothing in them may stop a plugin from shutting down.
    peer.onRequest("shutdown", async (raw) => {
      const reason = (raw as { reason?: unknown } | null | undefined)?.reason;
      await this.lifecycle.stop(
        typeof reason === "string" ? `shutdown requested: ${reason}` : "shutdown requested",
      );
      this.lifecycle.closeAfterReply(peer, output, () => this.finish());
      return { ok: true };
    });

    dispatcher.on("broker.event", (params) => this.dispatchEvent(params));

    // Reached only for a delta matching no pending stream (e.g. one sent after its final reply).
    peer.onNotification("llm.complete.delta", (raw) => {
      logWarning("llm.complete.delta for no pending stream dropped", {
        request_id: (raw as { request_id?: unknown } | null)?.request_id,
      });
    });

    peer.setFallbackNotificationHandler((_params, method) => {
      if (method in plugin.pluginMethods) {
        logWarning(`${method} arrived as a notification (no id): there is no one to answer, dropped`);
      }
    });
  }

  private dispatchEvent(params: plugin.BrokerEventParams): void {
    const onEvent = this.options.onEvent;
    if (!onEvent) return;
    const { topic } = params;
    if (this.lifecycle.stopping) {
      logWarning("broker.event during shutdown dropped", { topic });
      return;
    }
    const event = Event.fromJson(params.event);
    this.tasks
      .run(`broker.event ${topic}`, () => onEvent(topic, event, this.brokerSender))
      .catch((error: unknown) => {
        if (!(error instanceof AbandonedError)) logHandlerFailure(`onEvent (${topic})`, error);
      });
  }
}
