/**
 * The host side of ONE microapp (microapp contract): it runs the executable through the shared
 * Supervisor (own process group, scrubbed environment, optional bubblewrap sandbox, stderr capture
 * through the log budget, restart with backoff), attaches a JsonRpcPeer to every incarnation, runs
 * `initialize {extension_id, state_dir, config}`, and offers one typed way to call the microapp
 * (`callTool`, `refreshTools`, `callHook`, `notify`), each failing at once with
 * MicroappUnavailableError while no initialized process runs.
 *
 * Every daemon → microapp call is bounded by the microapp's `timeout_secs` (default 30 s); a
 * timeout fails that call and leaves the process alone. Whatever serves the microapp's own
 * requests (the admin RPC frame) is installed through `attach`, on each new peer before
 * `initialize` is sent, so it also serves every incarnation after a restart.
 *
 * Stop, as the contract says: `shutdown`, its `{ok: true}` awaited up to 5 s, then SIGTERM to the
 * process group (after up to 1 s for a microapp that exits by itself once it answered), then
 * SIGKILL once 10 s have passed since `shutdown` was sent.
 */
import { EventEmitter } from "node:events";
import {
  Caller,
  formatIssues,
  JsonRpcPeer,
  MalformedReplyError,
  type ProtocolProblem,
  type RequestOptions,
  RpcError,
  TimeoutError,
} from "@nexo/wire";
import * as microapp from "@nexo/wire/schemas/microapp";
import { isoTime } from "../../iso-time.js";
import { createLogger } from "../../log.js";
import { NEXO_VERSION } from "../../version.js";
import { settlesWithin } from "../bounded-wait.js";
import { buildLaunchSpec, type LaunchInput, type LaunchSpec } from "../launch.js";
import { LogBudget } from "../log-budget.js";
import { errorCodeOf } from "../plugins/errors.js";
import { killProcessGroup } from "../reaper.js";
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
  checkHooks,
  checkToolCatalog,
  InitializeEnvelopeSchema,
  type MicroappCatalog,
  ToolsListEnvelopeSchema,
} from "./catalog.js";
import { MicroappHandshakeError, MicroappInitTimeoutError, MicroappUnavailableError } from "./errors.js";
import {
  MICROAPP_KILL_AFTER_MS,
  MICROAPP_MAX_FRAME_BYTES,
  MICROAPP_RESTART_POLICY,
  MICROAPP_SHUTDOWN_ACK_MS,
  type MicroappErrorRecord,
  type MicroappExitRecord,
  type MicroappHostEvents,
  type MicroappHostOptions,
  type MicroappHostStatus,
  type MicroappSession,
  type PeerAttacher,
} from "./host-types.js";

export * from "./host-types.js";

type Env = Readonly<Record<string, string | undefined>>;
type MicroappCaller = Caller<typeof microapp.microappMethods>;

/** How long a microapp that answered `shutdown` may take to exit by itself before SIGTERM. */
const EXIT_AFTER_ACK_MS = 1_000;

/** Protocol warnings logged per microapp per 10 s; the rest are counted into one summary line. */
const PROTOCOL_LOG_LINES = 20;

export class MicroappHost extends EventEmitter<MicroappHostEvents> {
  readonly id: string;
  /** Every daemon → microapp call is bounded by this (extensions.yaml `timeout_secs`). */
  readonly timeoutMs: number;
  private readonly options: MicroappHostOptions;
  private readonly env: Env;
  private readonly logger: SupervisorLogger;
  private readonly protocolLog: LogBudget;
  private readonly supervisor: Supervisor;
  private readonly attachers = new Set<PeerAttacher>();
  private readonly problems = new Map<string, number>();
  private launchSpec: LaunchSpec | undefined;
  private launchError: Error | undefined;
  private newestPeer: JsonRpcPeer | undefined;
  private starting: MicroappSession | undefined;
  private live: MicroappSession | undefined;
  private startError: Error | undefined;
  private lastError: MicroappErrorRecord | undefined;
  private lastExit: MicroappExitRecord | undefined;
  private started = 0;
  private calls: { peer: JsonRpcPeer; caller: MicroappCaller } | undefined;

  constructor(options: MicroappHostOptions) {
    super();
    this.options = options;
    this.id = options.definition.id;
    this.env = options.env ?? process.env;
    this.timeoutMs = (options.definition.entry.timeout_secs ?? microapp.MICROAPP_DEFAULT_TIMEOUT_SECS) * 1000;
    this.logger = options.logger ?? createLogger({ base: { component: "microapp-host", microapp: this.id } });
    this.protocolLog = new LogBudget({
      logger: this.logger,
      maxLines: PROTOCOL_LOG_LINES,
      what: "protocol warnings",
      fields: { microapp: this.id },
    });
    const killAfterMs = options.killAfterMs ?? MICROAPP_KILL_AFTER_MS;
    this.supervisor = new Supervisor({
      id: `microapp:${this.id}`,
      spawn: () => {
        if (this.launchSpec === undefined) throw new Error("no launch spec (start() was not called)");
        return this.launchSpec;
      },
      onStarted: (incarnation) => this.onIncarnation(incarnation),
      restart: { ...MICROAPP_RESTART_POLICY, ...options.restart },
      startTimeoutMs: this.timeoutMs + 5_000,
      // The graceful step (shutdown, SIGTERM, wait) ends by the SIGKILL deadline; what is still
      // running then is killed at once.
      gracefulTimeoutMs: killAfterMs,
      exitGraceMs: 0,
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
      if (this.live?.incarnation === exit.incarnation) this.live = undefined;
      if (!exit.requested) this.record("microapp_crashed", `the microapp ${describeExit(exit)}`);
    });
    this.supervisor.on("failed", (failure) => {
      if (this.startError instanceof MicroappHandshakeError) this.recordError(this.startError);
      else this.record("microapp_failed", failure.reason);
      this.emit("failed", failure);
    });
  }

  /** `failed` also when the microapp could not be launched at all (sandbox, command). */
  get state(): SupervisorState {
    return this.launchError !== undefined ? "failed" : this.supervisor.state;
  }

  /** The running, initialized incarnation, if any. */
  get session(): MicroappSession | undefined {
    return this.supervisor.state === "running" ? this.live : undefined;
  }

  /** Logs what the microapp's own frames cause, within its budget of protocol warnings. */
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
   * Starts the microapp and resolves once its first incarnation answered `initialize`. Never waits
   * beyond the first attempt: when it crashed and a restart is scheduled, this rejects with
   * StartDeferredError and the restarts go on in the background (`ready` is emitted then).
   */
  async start(): Promise<MicroappSession> {
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
      const handshake =
        this.startError instanceof MicroappHandshakeError ||
        this.startError instanceof MicroappInitTimeoutError;
      if (gaveUp && handshake) throw this.startError;
      throw error;
    }
    const session = this.session;
    if (session === undefined) throw new MicroappUnavailableError(this.id, this.state);
    return session;
  }

  /** `shutdown` (≤ 5 s for `{ok: true}`), SIGTERM, SIGKILL 10 s after `shutdown`. Resolves once gone. */
  stop(reason = "host requested"): Promise<void> {
    return this.supervisor.stop({
      reason,
      shutdown: (incarnation, signal) => this.shutdownStep(incarnation, signal),
    });
  }

  /** One `tools/call`. Rejects with the peer's errors (TimeoutError, RpcError, …) or MalformedReplyError. */
  callTool(
    params: microapp.MicroappToolCallParams,
    options: { signal?: AbortSignal } = {},
  ): Promise<microapp.MicroappToolCallResult> {
    // The path of every microapp tool call: a refusal as a rejection, no `async` wrapper, and the
    // options built field by field (a spread takes V8's slow path on every call).
    let caller: MicroappCaller;
    try {
      caller = this.caller();
    } catch (error) {
      return Promise.reject(error);
    }
    const requestOptions: RequestOptions = { timeoutMs: this.timeoutMs };
    if (options.signal !== undefined) requestOptions.signal = options.signal;
    return caller.request("tools/call", params, requestOptions);
  }

  /**
   * Asks `tools/list` again and adopts the answer; emits `tools` when the accepted catalogue
   * changed. A reply that is not a tools/list result leaves the catalogue as it was and rejects.
   */
  async refreshTools(): Promise<MicroappCatalog> {
    const session = this.requireSession();
    const reply = await session.peer.request("tools/list", {}, { timeoutMs: this.timeoutMs });
    const parsed = ToolsListEnvelopeSchema.safeParse(reply);
    if (!parsed.success)
      throw new MalformedReplyError("tools/list", formatIssues(parsed.error.issues, "(result)"));
    const text = JSON.stringify(parsed.data.tools);
    if (text === session.catalogText) return session.catalog;
    session.catalogText = text;
    session.catalog = checkToolCatalog(this.id, parsed.data.tools);
    for (const problem of session.catalog.rejected) this.logger.error({ microapp: this.id }, problem);
    this.emit("tools", session);
    return session.catalog;
  }

  /** One `hooks/<name>`; the decision as the microapp sent it (a missing vote reads as abstain). */
  async callHook(name: string, params: unknown): Promise<microapp.MicroappHookDecision> {
    const method = microapp.hookMethodName(name);
    const reply = await this.requireSession().peer.request(method, params, { timeoutMs: this.timeoutMs });
    const parsed = microapp.microappHookMethod.result.safeParse(reply ?? {});
    if (!parsed.success) throw new MalformedReplyError(method, formatIssues(parsed.error.issues, "(result)"));
    return parsed.data as microapp.MicroappHookDecision;
  }

  /** Sends a notification (no reply). Rejects when no initialized process runs. */
  notify(method: string, params: unknown): Promise<void> {
    return this.requireSession().peer.notify(method, params);
  }

  status(): MicroappHostStatus {
    const session = this.session;
    return {
      id: this.id,
      state: this.state,
      pid: this.supervisor.incarnation?.pid,
      restarts: Math.max(0, this.started - 1),
      sandboxed: this.launchSpec?.sandboxed,
      version: session?.version,
      tools: session === undefined ? [] : [...session.catalog.tools.keys()],
      hooks: session === undefined ? [] : [...session.hooks.names],
      warnings: session === undefined ? [] : [...session.catalog.rejected, ...session.hooks.ignored],
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
      name: `microapp:${this.id}#${incarnation.number}`,
      ids: "integer",
      malformed: "ignore",
      errorProtocol: "microapp",
      requestTimeoutMs: this.timeoutMs,
      maxFrameBytes: MICROAPP_MAX_FRAME_BYTES,
      maxOutgoingFrameBytes: MICROAPP_MAX_FRAME_BYTES,
      // As the plugin host: requests issued in one tick (parallel tool calls) leave in one write,
      // at most 8 per write, so the microapp wakes once for them and starts on the first ones.
      coalesce: true,
      coalesceMaxFrames: 8,
      // Everything the peer logs is caused by what the microapp sends: through the budget.
      logger: this.protocolLog.asLogger(),
      onProtocolProblem: (problem) => this.countProblem(problem),
    });
    incarnation.signal.addEventListener("abort", () => peer.close(`microapp ${this.id} exited`), {
      once: true,
    });
    this.newestPeer = peer;
    for (const attacher of this.attachers) attacher(peer);
    try {
      this.starting = await this.initialize(peer, incarnation);
    } catch (error) {
      this.startError = error as Error;
      peer.close("initialize failed");
      throw error;
    }
  }

  private async initialize(peer: JsonRpcPeer, incarnation: Incarnation): Promise<MicroappSession> {
    const params = {
      extension_id: this.id,
      state_dir: this.options.stateDir,
      ...(this.options.definition.entry.config === undefined
        ? {}
        : { config: this.options.definition.entry.config }),
    };
    let reply: unknown;
    try {
      reply = await peer.request("initialize", params, { timeoutMs: this.timeoutMs });
    } catch (error) {
      if (error instanceof TimeoutError) throw new MicroappInitTimeoutError(this.timeoutMs);
      if (error instanceof RpcError)
        throw new MicroappHandshakeError(`the microapp answered with error ${error.code}: ${error.message}`, {
          cause: error,
        });
      throw error;
    }
    const parsed = InitializeEnvelopeSchema.safeParse(reply);
    if (!parsed.success)
      throw new MicroappHandshakeError(
        `the reply is not an initialize result: ${formatIssues(parsed.error.issues, "(result)")}`,
      );
    const catalog = checkToolCatalog(this.id, parsed.data.tools);
    const hooks = checkHooks(parsed.data.hooks);
    for (const problem of catalog.rejected) this.logger.error({ microapp: this.id }, problem);
    for (const problem of hooks.ignored) this.logger.warn({ microapp: this.id }, problem);
    return {
      incarnation: incarnation.number,
      pid: incarnation.pid,
      peer,
      version: parsed.data.version,
      catalog,
      hooks,
      catalogText: JSON.stringify(parsed.data.tools),
    };
  }

  private onRunning(incarnation: Incarnation): void {
    const session = this.starting;
    if (session === undefined || session.incarnation !== incarnation.number) return;
    this.starting = undefined;
    this.live = session;
    this.logger.info(
      { microapp: this.id, pid: session.pid, incarnation: session.incarnation, version: session.version },
      "microapp ready",
    );
    this.emit("ready", session);
  }

  private async shutdownStep(incarnation: Incarnation, signal: AbortSignal): Promise<void> {
    const session = this.live?.incarnation === incarnation.number ? this.live : undefined;
    if (session !== undefined && !session.peer.isClosed) {
      try {
        const reply = await this.caller(session.peer).request(
          "shutdown",
          {},
          {
            timeoutMs: this.options.shutdownAckMs ?? MICROAPP_SHUTDOWN_ACK_MS,
            signal,
          },
        );
        if (reply.ok !== true)
          this.record("microapp_shutdown_not_ok", "shutdown was answered without ok: true");
      } catch (error) {
        const code = error instanceof TimeoutError ? "microapp_shutdown_timeout" : "microapp_shutdown_failed";
        this.record(code, (error as Error).message);
        this.logger.warn(
          { microapp: this.id, err: (error as Error).message },
          "shutdown was not acknowledged cleanly",
        );
      } finally {
        session.peer.close("shut down");
      }
    }
    // A microapp that exits by itself after its answer is let go; one still running gets SIGTERM.
    if (!(await settlesWithin(incarnation.exited, EXIT_AFTER_ACK_MS)))
      killProcessGroup(incarnation.pid, "SIGTERM");
    // Bounded by the supervisor (gracefulTimeoutMs = the SIGKILL deadline).
    await incarnation.exited;
  }

  /** The typed caller of `peer` (default: the live session's), made once per peer. */
  private caller(peer = this.requireSession().peer): MicroappCaller {
    const kept = this.calls;
    if (kept?.peer === peer) return kept.caller;
    const caller = new Caller(peer, { requests: microapp.microappMethods });
    this.calls = { peer, caller };
    return caller;
  }

  private requireSession(): MicroappSession {
    const session = this.session;
    if (session === undefined || session.peer.isClosed)
      throw new MicroappUnavailableError(this.id, this.state);
    return session;
  }

  private launchInput(): LaunchInput {
    const { definition, stateDir } = this.options;
    const tokenEnv = definition.manifest.capabilities.http_server?.token_env;
    return {
      command: definition.executable,
      pluginDir: definition.dir,
      stateDir,
      ...(definition.manifest.plugin.sandbox ? { sandbox: definition.manifest.plugin.sandbox } : {}),
      env: {
        // The http_server's bearer token reaches the microapp by the name its plugin.toml gives.
        passthrough: tokenEnv === undefined ? [] : [tokenEnv],
        nexoVars: {
          NEXO_MICROAPP_ID: this.id,
          NEXO_VERSION: NEXO_VERSION,
          NEXO_STATE_DIR: stateDir,
        },
      },
      hostEnv: this.env,
      ...(this.options.findBwrap ? { findBwrap: this.options.findBwrap } : {}),
      ...(this.options.platform ? { platform: this.options.platform } : {}),
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
