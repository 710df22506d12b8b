/**
 * PluginAdapter: a plugin's whole side of the contract over stdio. The constructor validates the
 * manifest and the tool catalog; `run()` serves the host until shutdown, stdin EOF or a signal,
 * and resolves once the plugin's work has been drained. It never calls `process.exit`: a plugin
 * that keeps timers or sockets alive must close them in `onShutdown` (the host SIGKILLs a child
 * still alive 1 s after the ack).
 *
 * Shutdown, whatever triggered it (plugin contract §4.2, notes §5.10):
 *   1. stop taking new work (new requests get an error, new events are dropped);
 *   2. fail the plugin's pending calls to the host with RpcTransportError "adapter shutting down";
 *   3. wait for the in-flight handlers — at most `shutdownDrainTimeoutMs`; stragglers are
 *      abandoned (requests answered with an error, signals aborted) and named on stderr;
 *   4. run `onShutdown`, within the same bound; a failure is logged;
 *   5. reply `{ok: true}` to a shutdown request, wait for it to be written, stop reading.
 * Unlike upstream, stdin keeps being read during the drain, so a handler's call to the host made
 * during the drain is answered instead of stalling until its timeout.
 */
import type { Writable } from "node:stream";
import { InvalidParamsError, JsonRpcPeer } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { abandonHostCalls, BrokerSender } from "./broker.js";
import { checkToolCatalog, warnAboutUnmatchedDeclarations } from "./declarations.js";
import { PluginError, RpcTransportError } from "./errors.js";
import { Event } from "./event.js";
import { serveExtensionMethods } from "./handlers.js";
import { DEFAULT_RPC_TIMEOUT_MS } from "./host.js";
import { PeerLink } from "./host-link.js";
import { InflightTasks } from "./inflight.js";
import { logHandlerFailure, logWarning, stderrLogger } from "./log.js";
import { type ParsedManifest, parseManifest } from "./manifest.js";
import { DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS, type PluginAdapterOptions } from "./options.js";
import { AbandonedError, type DispatchEnv, describeIssues } from "./serve.js";
import { createFrameOutput, flushStdoutGuard, installStdoutGuard } from "./stdout-guard.js";
import { serveTools } from "./tool-dispatch.js";
import { type ToolHandlerWithContext, toolDefToJson } from "./tools.js";
import { MAX_FRAME_BYTES } from "./wire.js";

export type { EventHandler, PluginAdapterOptions, ShutdownHandler } from "./options.js";

export class PluginAdapter {
  private readonly parsed: ParsedManifest;
  private readonly options: PluginAdapterOptions;
  private readonly initializeReply: Record<string, unknown>;
  private readonly toolHandler: ToolHandlerWithContext | undefined;
  private readonly drainTimeoutMs: number;
  private readonly maxFrameBytes: number;
  private readonly maxOutgoingFrameBytes: number;
  private readonly link = new PeerLink();
  private readonly brokerSender: BrokerSender;
  private readonly tasks = new InflightTasks();

  private started = false;
  private stopping = false;
  private closing = false;
  private shutdown: Promise<void> | undefined;
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
    this.toolHandler = onToolWithContext ?? (onTool ? (inv) => onTool(inv) : undefined);

    const { id, version } = this.parsed.plugin;
    const reply: Record<string, unknown> = {
      manifest: this.parsed.raw,
      server_version: options.serverVersion ?? `${id}-${version}`,
    };
    if (tools.length > 0) reply.tools = tools.map(toolDefToJson);
    this.initializeReply = reply;

    this.brokerSender = new BrokerSender(this.link);
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
    });
    this.link.peer = peer;
    const done = new Promise<void>((resolve) => {
      this.finish = resolve;
    });

    this.serveLifecycle(peer, output);
    const env: DispatchEnv = {
      peer,
      tasks: this.tasks,
      broker: this.brokerSender,
      pluginId: this.pluginId,
      isStopping: () => this.stopping,
    };
    if (this.toolHandler) serveTools(env, this.toolHandler, this.maxOutgoingFrameBytes);
    serveExtensionMethods(env, this.options);
    warnAboutUnmatchedDeclarations(this.parsed, this.options, this.toolHandler !== undefined);

    const stopListening = this.options.handleProcessSignals === false ? () => {} : listenForSignals(peer);
    peer.closed.then(({ reason }) => this.onConnectionClosed(reason));
    try {
      await done;
    } finally {
      stopListening();
      // The peer no longer listens, but a flowing stdin would keep the process alive.
      process.stdin.pause();
      flushStdoutGuard();
    }
  }

  private serveLifecycle(peer: JsonRpcPeer, output: Writable): void {
    peer.onRequest("initialize", (raw) => {
      const parsed = plugin.InitializeParamsSchema.safeParse(raw);
      if (!parsed.success) {
        throw new InvalidParamsError(`invalid initialize params: ${describeIssues(parsed.error.issues)}`);
      }
      this.nexoVersion = parsed.data.nexo_version;
      return this.initializeReply;
    });

    // Shutdown params are not validated: nothing in them may stop a plugin from shutting down.
    peer.onRequest("shutdown", async (raw) => {
      const reason = (raw as { reason?: unknown } | null | undefined)?.reason;
      await this.stopAll(typeof reason === "string" ? `shutdown requested: ${reason}` : "shutdown requested");
      this.closeAfterReply(peer, output);
      return { ok: true };
    });

    peer.onNotification("broker.event", (raw) => this.dispatchEvent(raw));

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

  private dispatchEvent(raw: unknown): void {
    const onEvent = this.options.onEvent;
    if (!onEvent) return;
    const parsed = plugin.BrokerEventParamsSchema.safeParse(raw);
    if (!parsed.success) {
      logWarning(`broker.event dispatch decode failed, dropped: ${describeIssues(parsed.error.issues)}`);
      return;
    }
    const { topic } = parsed.data;
    if (this.stopping) {
      logWarning("broker.event during shutdown dropped", { topic });
      return;
    }
    const event = Event.fromJson(parsed.data.event);
    this.tasks
      .run(`broker.event ${topic}`, () => onEvent(topic, event, this.brokerSender))
      .catch((error: unknown) => {
        if (!(error instanceof AbandonedError)) logHandlerFailure(`onEvent (${topic})`, error);
      });
  }

  private onConnectionClosed(reason: string): void {
    if (this.closing) return;
    this.tasks.abortAll(new RpcTransportError(`host connection closed: ${reason}`));
    this.stopAll(reason).then(() => this.finish());
  }

  private stopAll(trigger: string): Promise<void> {
    this.shutdown ??= this.drainAndStop(trigger);
    return this.shutdown;
  }

  private async drainAndStop(trigger: string): Promise<void> {
    this.stopping = true;
    this.brokerSender[abandonHostCalls](new RpcTransportError("adapter shutting down"));
    const stragglers = await this.tasks.drain(this.drainTimeoutMs);
    if (stragglers.length > 0) {
      this.tasks.abandon(new AbandonedError(this.drainTimeoutMs));
      logWarning(
        `${trigger}: abandoned ${stragglers.length} handler(s) still running after ${this.drainTimeoutMs} ms`,
        { abandoned: stragglers },
      );
    }
    await this.runOnShutdown();
  }

  private async runOnShutdown(): Promise<void> {
    const onShutdown = this.options.onShutdown;
    if (!onShutdown) return;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      Promise.resolve()
        .then(onShutdown)
        .then(
          () => "done" as const,
          (error: unknown) => {
            logHandlerFailure("onShutdown", error);
            return "failed" as const;
          },
        ),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), this.drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      logWarning(`onShutdown did not finish within ${this.drainTimeoutMs} ms; going on without it`);
    }
  }

  /**
   * The reply to `shutdown` is written by the peer once the handler's promise settles; a
   * macrotask later it has been handed to the writer. Wait until the writer has passed it on, then
   * stop reading: frames after the ack are ignored.
   */
  private closeAfterReply(peer: JsonRpcPeer, output: Writable): void {
    if (this.closing) return;
    this.closing = true;
    setImmediate(async () => {
      const deadline = Date.now() + this.drainTimeoutMs;
      while (peer.queuedFrames > 0 && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
          output.once("drain", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      peer.close("shutdown acknowledged");
      this.finish();
    });
  }
}

function listenForSignals(peer: JsonRpcPeer): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    // A second signal gets Node's default behaviour: the operator insists.
    stop();
    logWarning(`received ${signal}: draining in-flight work, then stopping`);
    peer.close(`received ${signal}`);
  };
  const stop = () => {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return stop;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new PluginError(`${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
