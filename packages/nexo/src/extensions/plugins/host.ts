/**
 * The host side of ONE plugin (plugin contract §4): it runs the child through the shared
 * Supervisor (own process group, scrubbed env, bubblewrap sandbox, stderr capture, restart with
 * backoff), attaches a JsonRpcPeer to every incarnation, runs the `initialize` handshake, and
 * offers the wrappers one way to call the plugin: `request` / `requestStream`, which fail at once
 * with a typed error while no handshaken child is running.
 *
 * Whatever serves the child's own requests and notifications (services.ts, bridge.ts) registers
 * through `attach`, and is installed on each new peer before `initialize` is sent, so it also
 * works on every incarnation after a restart.
 */
import { EventEmitter } from "node:events";
import {
  ConnectionClosedError,
  JsonRpcPeer,
  type ProtocolProblem,
  type RequestOptions,
  RpcError,
  type StreamRequestOptions,
  TimeoutError,
} from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import { SchemaValidators } from "../../engine/tools/schema-validator.js";
import { isoTime } from "../../iso-time.js";
import { createLogger } from "../../log.js";
import { NEXO_VERSION } from "../../version.js";
import { buildLaunchSpec, type LaunchInput, type LaunchSpec } from "../launch.js";
import { LogBudget } from "../log-budget.js";
import { restartPolicyFromManifest } from "../restart-policy.js";
import {
  describeExit,
  type Incarnation,
  StartDeferredError,
  Supervisor,
  SupervisorFailedError,
  type SupervisorLogger,
  type SupervisorState,
} from "../supervisor.js";
import {
  errorCodeOf,
  PluginCatalogError,
  PluginHandshakeError,
  PluginIdentityError,
  PluginInitTimeoutError,
  PluginShutdownError,
  PluginUnavailableError,
} from "./errors.js";
import { performHandshake } from "./handshake.js";
import {
  type PeerAttacher,
  PLUGIN_MAX_FRAME_BYTES,
  type PluginErrorRecord,
  type PluginExitRecord,
  type PluginHostEvents,
  type PluginHostOptions,
  type PluginHostStatus,
  type PluginSession,
} from "./host-types.js";
import type { LoadedPluginManifest } from "./manifest.js";
import {
  DEFAULT_SHUTDOWN_ACK_TIMEOUT_MS,
  type PluginTimeouts,
  resolvePluginTimeouts,
  SHUTDOWN_EXIT_GRACE_MS,
} from "./timeouts.js";

export * from "./host-types.js";

type Env = Readonly<Record<string, string | undefined>>;

export class PluginHost extends EventEmitter<PluginHostEvents> {
  readonly id: string;
  readonly manifest: LoadedPluginManifest;
  readonly timeouts: PluginTimeouts;
  private readonly options: PluginHostOptions;
  private readonly env: Env;
  private readonly logger: SupervisorLogger;
  private readonly protocolLog: LogBudget;
  private readonly supervisor: Supervisor;
  private readonly attachers = new Set<PeerAttacher>();
  private readonly problems = new Map<string, number>();
  private launchSpec: LaunchSpec | undefined;
  private launchError: Error | undefined;
  /** The peer of the newest incarnation, handshaken or not. */
  private newestPeer: JsonRpcPeer | undefined;
  private starting: PluginSession | undefined;
  private live: PluginSession | undefined;
  /** When `live` finished its handshake: the start of the running process's uptime. */
  private runningSince: Date | undefined;
  private startError: Error | undefined;
  private lastError: PluginErrorRecord | undefined;
  private lastExit: PluginExitRecord | undefined;
  private started = 0;

  /** Throws PluginEnvError when an NEXO_PLUGIN_*_TIMEOUT_MS override is unusable. */
  constructor(options: PluginHostOptions) {
    super();
    this.options = options;
    this.manifest = options.manifest;
    this.id = options.manifest.id;
    this.env = options.env ?? process.env;
    this.timeouts = resolvePluginTimeouts(this.env);
    this.logger = options.logger ?? createLogger({ base: { component: "plugin-host", plugin: this.id } });
    this.protocolLog = new LogBudget({
      logger: this.logger,
      maxLines: PROTOCOL_LOG_LINES,
      what: "protocol warnings",
      fields: { plugin: this.id },
    });
    const supervisorSection = this.manifest.manifest.plugin.supervisor;
    this.supervisor = new Supervisor({
      id: `plugin:${this.id}`,
      spawn: () => {
        if (this.launchSpec === undefined) throw new Error("no launch spec (start() was not called)");
        return this.launchSpec;
      },
      onStarted: (incarnation) => this.onIncarnation(incarnation),
      restart: { ...restartPolicyFromManifest(supervisorSection), ...options.restart },
      // The handshake bounds itself with the init timeout; this only backs it up.
      startTimeoutMs: this.timeouts.initMs + 5_000,
      gracefulTimeoutMs: (options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_ACK_TIMEOUT_MS) + 1_000,
      exitGraceMs: options.exitGraceMs ?? SHUTDOWN_EXIT_GRACE_MS,
      stderrTailLines: supervisorSection?.stderr_tail_lines ?? plugin.SUPERVISOR_DEFAULTS.stderr_tail_lines,
      logger: this.logger,
      ...(options.processGroups ? { registry: options.processGroups } : {}),
    });
    this.supervisor.on("state", (change) => this.emit("state", change));
    this.supervisor.on("started", () => {
      this.started += 1;
      this.startError = undefined;
    });
    this.supervisor.on("running", (incarnation) => this.onRunning(incarnation));
    this.supervisor.on("exit", (exit) => {
      this.protocolLog.flush();
      this.lastExit = { code: exit.code, signal: exit.signal, requested: exit.requested };
      if (this.live?.incarnation === exit.incarnation) {
        this.live.catalog.release();
        this.live = undefined;
      }
      if (!exit.requested) this.record("plugin_crashed", `the plugin ${describeExit(exit)}`);
    });
    this.supervisor.on("failed", (failure) => {
      if (isHandshakeError(this.startError)) this.recordError(this.startError);
      else this.record("plugin_failed", failure.reason);
      this.emit("failed", failure);
    });
  }

  /** `failed` also when the plugin was refused before it could be spawned (sandbox, env, command). */
  get state(): SupervisorState {
    return this.launchError !== undefined ? "failed" : this.supervisor.state;
  }

  /** The running, handshaken incarnation, if any. */
  get session(): PluginSession | undefined {
    return this.supervisor.state === "running" ? this.live : undefined;
  }

  /**
   * Logs what the plugin's own frames cause (refused publishes, undeliverable events) within the
   * plugin's budget of protocol warnings, so a misbehaving plugin cannot flood the daemon's log.
   */
  get protocolLogger(): SupervisorLogger {
    return this.protocolLog.asLogger();
  }

  /** Adds handlers to every peer from now on (and to the current one). Returns the remover. */
  attach(attacher: PeerAttacher): () => void {
    this.attachers.add(attacher);
    const current = this.newestPeer;
    if (current !== undefined && !current.isClosed) attacher(current);
    return () => this.attachers.delete(attacher);
  }

  /**
   * Starts the plugin and resolves once its first incarnation passed the handshake. Rejects with
   * the sandbox's, the environment's or the command's typed error when it may not start at all,
   * with PluginIdentityError / PluginCatalogError / PluginHandshakeError / PluginInitTimeoutError
   * when the handshake failed, else with the supervisor's SupervisorFailedError or, when the first
   * attempt crashed and a restart is scheduled, StartDeferredError.
   *
   * It never waits beyond the first attempt: a plugin in a crash loop must not hold up whoever
   * starts it (the daemon's boot). After a failed first attempt `state` tells whether the plugin
   * keeps restarting in the background (`backoff`, `starting`) — `ready` is emitted when an
   * incarnation comes up — or is done (`failed`).
   */
  async start(): Promise<PluginSession> {
    this.launchError = undefined;
    try {
      this.launchSpec = buildLaunchSpec(this.launchInput());
    } catch (error) {
      this.launchError = error as Error;
      this.recordError(error);
      throw error;
    }
    try {
      await this.supervisor.start({ firstAttemptOnly: true });
    } catch (error) {
      const gaveUp = error instanceof SupervisorFailedError || error instanceof StartDeferredError;
      if (gaveUp && isHandshakeError(this.startError)) throw this.startError;
      throw error;
    }
    const session = this.session;
    if (session === undefined) throw new PluginUnavailableError(this.id, this.state);
    return session;
  }

  /**
   * Stops the plugin: `shutdown`, its acknowledgement (bounded), then up to 1 s for the process
   * to exit, then SIGKILL to its whole process group. Resolves once it is gone.
   */
  stop(reason = "host requested"): Promise<void> {
    return this.supervisor.stop({
      reason,
      shutdown: (incarnation, signal) => this.sendShutdown(incarnation, reason, signal),
    });
  }

  /** Sends a request to the running plugin. Rejects with PluginUnavailableError when there is none. */
  request<R = unknown>(method: string, params: unknown, options: RequestOptions): Promise<R> {
    // Not `async` (the path of every tool call): the peer's promise as is, a refusal as a rejection.
    let peer: JsonRpcPeer;
    try {
      peer = this.requirePeer();
    } catch (error) {
      return Promise.reject(error);
    }
    return peer.request<R>(method, params, options);
  }

  /** Like `request`, for replies streamed as `deltaMethod` notifications before the final response. */
  async requestStream<R = unknown, D = unknown>(
    method: string,
    params: unknown,
    options: StreamRequestOptions<D>,
  ): Promise<R> {
    return this.requirePeer().requestStream<R, D>(method, params, options);
  }

  status(): PluginHostStatus {
    const session = this.session;
    return {
      id: this.id,
      version: this.manifest.manifest.plugin.version,
      state: this.state,
      pid: this.supervisor.incarnation?.pid,
      startedAt: this.state === "running" ? this.runningSince : undefined,
      restarts: Math.max(0, this.started - 1),
      sandboxed: this.launchSpec?.sandboxed,
      serverVersion: session?.serverVersion,
      tools: session === undefined ? [] : [...session.catalog.tools.keys()],
      warnings: session === undefined ? [] : [...session.warnings],
      lastError: this.lastError,
      lastExit: this.lastExit,
      stderrTail: this.supervisor.stderrTail(),
      protocolProblems: Object.fromEntries(this.problems),
    };
  }

  // --- incarnations --------------------------------------------------------------------------

  private async onIncarnation(incarnation: Incarnation): Promise<void> {
    const peer = JsonRpcPeer.overStreams({
      input: incarnation.stdout,
      output: incarnation.stdin,
      name: `plugin:${this.id}#${incarnation.number}`,
      ids: "integer",
      malformed: "ignore",
      errorProtocol: "plugin",
      maxFrameBytes: PLUGIN_MAX_FRAME_BYTES,
      maxOutgoingFrameBytes: PLUGIN_MAX_FRAME_BYTES,
      // Requests issued in one tick (parallel tool calls, broker events) leave in one write: the
      // child wakes once for all of them instead of once per frame (docs/performance.md).
      coalesce: true,
      // …but at most 8 per write: with 16 calls in flight the child starts on the first 8 while
      // the rest are written, instead of the two processes taking turns a whole tick at a time.
      coalesceMaxFrames: 8,
      // Everything the peer logs is caused by what the plugin sends: through the budget.
      logger: this.protocolLog.asLogger(),
      onProtocolProblem: (problem) => this.countProblem(problem),
    });
    // The pipes' EOF closes the peer too; this makes a torn-down incarnation fail its calls at once.
    incarnation.signal.addEventListener("abort", () => peer.close(`plugin ${this.id} exited`), {
      once: true,
    });
    this.newestPeer = peer;
    for (const attacher of this.attachers) attacher(peer);
    try {
      const result = await performHandshake({
        peer,
        pluginId: this.id,
        declaredTools: this.manifest.manifest.plugin.extends?.tools ?? [],
        nexoVersion: this.options.nexoVersion ?? NEXO_VERSION,
        hostFeatures: this.options.hostFeatures ?? [],
        initTimeoutMs: this.timeouts.initMs,
        // A fresh ajv per handshake: a restarted plugin re-advertising a schema with an `$id`
        // must not collide with the catalog it replaces.
        validators: new SchemaValidators(),
      });
      for (const warning of result.warnings) this.logger.warn({ plugin: this.id }, warning);
      this.starting = {
        incarnation: incarnation.number,
        pid: incarnation.pid,
        peer,
        serverVersion: result.serverVersion,
        catalog: result.catalog,
        warnings: result.warnings,
        channelFeatures: result.channelFeatures,
      };
    } catch (error) {
      this.startError = error as Error;
      peer.close("handshake failed");
      // The pipe's EOF usually beats the exit status: give the exit a moment to be seen, so the
      // failure reads "exited with code 1" rather than "input ended".
      if (error instanceof ConnectionClosedError) await settlesSoon(incarnation.exited, EXIT_NOTICE_MS);
      throw error;
    }
  }

  private onRunning(incarnation: Incarnation): void {
    const session = this.starting;
    if (session === undefined || session.incarnation !== incarnation.number) return;
    this.starting = undefined;
    this.live?.catalog.release();
    this.live = session;
    this.runningSince = new Date();
    this.logger.info(
      {
        plugin: this.id,
        pid: session.pid,
        incarnation: session.incarnation,
        serverVersion: session.serverVersion,
      },
      "plugin ready",
    );
    this.emit("ready", session);
  }

  private async sendShutdown(incarnation: Incarnation, reason: string, signal: AbortSignal): Promise<void> {
    const peer = this.live?.incarnation === incarnation.number ? this.live.peer : undefined;
    if (peer === undefined || peer.isClosed) return;
    try {
      await peer.request(
        "shutdown",
        { reason },
        {
          timeoutMs: this.options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_ACK_TIMEOUT_MS,
          signal,
        },
      );
    } catch (error) {
      if (error instanceof RpcError)
        this.recordError(new PluginShutdownError(`${error.code}: ${error.message}`));
      else if (error instanceof TimeoutError) this.record("plugin_shutdown_timeout", error.message);
      else this.recordError(error);
      this.logger.warn(
        { plugin: this.id, err: (error as Error).message },
        "shutdown was not acknowledged cleanly",
      );
    } finally {
      // Closing stdin tells an SDK that still reads to finish; the supervisor enforces the rest.
      peer.close("shut down");
    }
  }

  private requirePeer(): JsonRpcPeer {
    const session = this.session;
    if (session === undefined || session.peer.isClosed) throw new PluginUnavailableError(this.id, this.state);
    return session.peer;
  }

  private launchInput(): LaunchInput {
    const { manifest, options } = this;
    const nexoVersion = options.nexoVersion ?? NEXO_VERSION;
    return {
      command: manifest.entrypoint.command,
      args: manifest.entrypoint.args ?? [],
      pluginDir: manifest.dir,
      stateDir: options.stateDir,
      ...(manifest.manifest.plugin.sandbox ? { sandbox: manifest.manifest.plugin.sandbox } : {}),
      env: {
        manifestEnv: manifest.entrypoint.env ?? {},
        operatorEnv: options.operatorEnv ?? {},
        passthrough: options.passthroughEnv ?? [],
        nexoVars: {
          NEXO_PLUGIN_ID: this.id,
          NEXO_PLUGIN_VERSION: manifest.manifest.plugin.version,
          NEXO_PLUGIN_CONTRACT_VERSION: plugin.PLUGIN_CONTRACT_VERSION,
          NEXO_VERSION: nexoVersion,
          NEXO_STATE_DIR: options.stateDir,
        },
      },
      hostEnv: this.env,
      ...(options.findBwrap ? { findBwrap: options.findBwrap } : {}),
      ...(options.platform ? { platform: options.platform } : {}),
    };
  }

  private countProblem(problem: ProtocolProblem): void {
    this.problems.set(problem.kind, (this.problems.get(problem.kind) ?? 0) + 1);
  }

  private record(code: string, message: string): void {
    this.lastError = { code, message, at: isoTime() };
  }

  private recordError(error: unknown): void {
    this.record(errorCodeOf(error), error instanceof Error ? error.message : String(error));
  }
}

/** Protocol warnings logged per plugin per 10 s; the rest are counted into one summary line. */
const PROTOCOL_LOG_LINES = 20;

/** How long a handshake that lost its pipe waits for the child's exit status. */
const EXIT_NOTICE_MS = 1_000;

async function settlesSoon(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise.then(noop, noop), timeout]);
  clearTimeout(timer);
}

function noop(): void {}

function isHandshakeError(error: Error | undefined): error is Error {
  return (
    error instanceof PluginIdentityError ||
    error instanceof PluginCatalogError ||
    error instanceof PluginHandshakeError ||
    error instanceof PluginInitTimeoutError
  );
}
