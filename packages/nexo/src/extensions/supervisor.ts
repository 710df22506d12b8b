/**
 * Supervises ONE child process — a plugin, a microapp or an MCP stdio server; the protocol spoken
 * over its stdio is the owner's business.
 *
 * - Each process runs in its own process group and carries a lineage tag (child-run.ts), so
 *   stopping it also stops everything it spawned — even what left the group with setsid — and the
 *   reaper can kill it if the daemon dies.
 * - stdin/stdout go to the owner once per incarnation (`onStarted`), where it attaches a
 *   JsonRpcPeer and runs its handshake. stderr is logged line by line (through a budget, so a
 *   chatty child cannot flood the log: log-budget.ts) and its tail kept.
 * - An exit nobody asked for is a crash: the child is restarted after an exponential backoff, or
 *   marked `failed` when it crash-loops (restart-policy.ts). A failed child stays failed.
 * - `stop()`: the owner's graceful step (e.g. `shutdown` and its reply, or closing stdin), then
 *   (with `termAfterShutdown`) SIGTERM, then up to `exitGraceMs` (1 s, plugin contract §4.2) for
 *   the process to exit, then SIGKILL to the whole group.
 */
import { EventEmitter } from "node:events";
import { liveProcessGroups, type ProcessGroupRegistry } from "../process/registry.js";
import { settlesWithin, withTimeout } from "./bounded-wait.js";
import { ChildRun } from "./child-run.js";
import { LogBudget } from "./log-budget.js";
import { CrashTracker, normalizeRestartPolicy, type RestartPolicy } from "./restart-policy.js";
import {
  DEFAULT_STDERR_MAX_LINE_BYTES,
  DEFAULT_STDERR_TAIL_LINES,
  RingBuffer,
  stderrLevel,
} from "./stderr-capture.js";
import {
  type ChildExit,
  describeExit,
  type FailureInfo,
  FatalStartError,
  type Incarnation,
  type SpawnSpec,
  StartAbortedError,
  StartDeferredError,
  StartTimeoutError,
  type SupervisorEvents,
  SupervisorFailedError,
  type SupervisorLogger,
  type SupervisorState,
} from "./supervisor-types.js";

export * from "./supervisor-types.js";

export const DEFAULT_EXIT_GRACE_MS = 1_000;
export const DEFAULT_GRACEFUL_TIMEOUT_MS = 5_000;
export const DEFAULT_START_TIMEOUT_MS = 30_000;
export const DEFAULT_STDERR_LOG_LINES = 200;
/** SIGKILL cannot be ignored; this only bounds the wait for a process stuck in the kernel. */
const KILL_WAIT_MS = 5_000;

export type ShutdownStep = (incarnation: Incarnation, signal: AbortSignal) => Promise<unknown>;

export interface SupervisorOptions {
  /** Names the child in logs and errors, e.g. the plugin id. */
  id: string;
  /** What to run; a function is called for every incarnation. If it throws, the supervisor fails. */
  spawn: SpawnSpec | (() => SpawnSpec);
  /** The owner's start step on each new process (attach a peer, handshake). Rejecting = start failed. */
  onStarted?: (incarnation: Incarnation) => void | Promise<void>;
  /** The owner's graceful step in `stop()` while running, e.g. send `shutdown` and await the reply. */
  shutdown?: ShutdownStep;
  restart?: Partial<RestartPolicy>;
  /** Bounds `onStarted`. Default 30 s. */
  startTimeoutMs?: number;
  /** Bounds the graceful step. Default 5 s. */
  gracefulTimeoutMs?: number;
  /** How long the process may take to exit after the graceful step before SIGKILL. Default 1 s. */
  exitGraceMs?: number;
  /**
   * Send SIGTERM when the graceful step is over and the process still runs, before the exit grace
   * (MCP's stdio shutdown: close stdin, wait, SIGTERM, wait, SIGKILL). Default false: a plugin
   * has answered `shutdown` by then, and what is left of it gets SIGKILL after the grace.
   */
  termAfterShutdown?: boolean;
  /** stderr lines kept for diagnostics. Default 200. */
  stderrTailLines?: number;
  /** stderr lines logged per 10 s; the rest are counted into one summary line. Default 200. */
  stderrLogLines?: number;
  stderrMaxLineBytes?: number;
  logger?: SupervisorLogger;
  registry?: ProcessGroupRegistry;
  /** Source of jitter; default Math.random. */
  random?: () => number;
}

export interface StopOptions {
  reason?: string;
  /** Replaces the constructor's graceful step for this stop. */
  shutdown?: ShutdownStep;
  gracefulTimeoutMs?: number;
  exitGraceMs?: number;
}

export interface StartOptions {
  /**
   * Settle after the first attempt: when it fails and a restart is scheduled, reject with
   * StartDeferredError instead of waiting through the backoff; the restarts go on in the
   * background (`running` is emitted when one succeeds). A boot must not wait on a crash loop.
   */
  firstAttemptOnly?: boolean;
}

interface Waiter {
  resolve: (incarnation: Incarnation) => void;
  reject: (error: Error) => void;
  firstAttemptOnly: boolean;
}

const noopLogger: SupervisorLogger = { debug() {}, info() {}, warn() {}, error() {} };

export class Supervisor extends EventEmitter<SupervisorEvents> {
  readonly id: string;
  private readonly options: SupervisorOptions;
  private readonly logger: SupervisorLogger;
  private readonly tracker: CrashTracker;
  private readonly tail: RingBuffer<string>;
  private readonly stderrLog: LogBudget;

  private currentState: SupervisorState = "idle";
  private run: ChildRun | undefined;
  private incarnations = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private waiters: Waiter[] = [];
  private lastFailure: FailureInfo | undefined;

  constructor(options: SupervisorOptions) {
    super();
    this.id = options.id;
    this.options = options;
    this.logger = options.logger ?? noopLogger;
    this.tracker = new CrashTracker(normalizeRestartPolicy(options.restart), options.random);
    this.tail = new RingBuffer(options.stderrTailLines ?? DEFAULT_STDERR_TAIL_LINES);
    this.stderrLog = new LogBudget({
      logger: this.logger,
      maxLines: options.stderrLogLines ?? DEFAULT_STDERR_LOG_LINES,
      what: "stderr lines",
      fields: { extension: this.id, stream: "stderr" },
    });
  }

  get state(): SupervisorState {
    return this.currentState;
  }

  /** The live incarnation, if a process is up. */
  get incarnation(): Incarnation | undefined {
    return this.run !== undefined && !this.run.hasExited ? this.run.incarnation : undefined;
  }

  /** Why the supervisor is `failed`, while it is. */
  get failure(): FailureInfo | undefined {
    return this.currentState === "failed" ? this.lastFailure : undefined;
  }

  /** The last stderr lines of this child (all incarnations), oldest first. */
  stderrTail(): string[] {
    return this.tail.toArray();
  }

  /**
   * Starts the child (from idle, stopped or failed; crash history is forgotten) and resolves with
   * the first incarnation to reach `running`. Rejects with SupervisorFailedError or
   * StartAbortedError when it fails or is stopped first, or — with `firstAttemptOnly` — with
   * StartDeferredError when the first attempt failed and a restart is scheduled. While already
   * starting or running, it just waits for / returns the running incarnation.
   */
  start(options: StartOptions = {}): Promise<Incarnation> {
    const state = this.currentState;
    if (state === "running" && this.run !== undefined) return Promise.resolve(this.run.incarnation);
    if (state === "stopping") return Promise.reject(new Error(`${this.id}: cannot start while stopping`));
    const firstAttemptOnly = options.firstAttemptOnly === true;
    const waiting = new Promise<Incarnation>((resolve, reject) =>
      this.waiters.push({ resolve, reject, firstAttemptOnly }),
    );
    if (state === "idle" || state === "stopped" || state === "failed") {
      this.tracker.reset();
      this.lastFailure = undefined;
      this.setState("starting");
      this.launch();
    }
    return waiting;
  }

  /** Stops the child and resolves once it is gone. Concurrent calls share one stop. */
  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.stopNow(options).finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  // --- starting ----------------------------------------------------------------------------------

  private launch(): void {
    let spec: SpawnSpec;
    try {
      const { spawn } = this.options;
      spec = typeof spawn === "function" ? spawn() : spawn;
    } catch (error) {
      this.enterFailed(`cannot be started: ${(error as Error).message}`);
      return;
    }
    try {
      this.run = new ChildRun({
        id: this.id,
        number: ++this.incarnations,
        spec,
        registry: this.options.registry ?? liveProcessGroups,
        logger: this.logger,
        maxStderrLineBytes: this.options.stderrMaxLineBytes ?? DEFAULT_STDERR_MAX_LINE_BYTES,
        leftoverGraceMs: this.options.exitGraceMs ?? DEFAULT_EXIT_GRACE_MS,
        onStderrLine: (line, run) => this.onStderrLine(line, run),
        onSpawned: (run) => void this.runStartStep(run),
        onDone: (run, exit) => this.onRunDone(run, exit),
      });
    } catch (error) {
      this.enterFailed(`cannot be spawned: ${(error as Error).message}`);
    }
  }

  private onStderrLine(line: string, run: ChildRun): void {
    this.tail.push(line);
    const fields = {
      extension: this.id,
      pid: run.pid,
      incarnation: run.incarnation.number,
      stream: "stderr",
    };
    this.stderrLog.log(stderrLevel(line), fields, line);
    this.emit("stderr", line, run.incarnation.number);
  }

  private async runStartStep(run: ChildRun): Promise<void> {
    if (run !== this.run || run.requested) return;
    this.emit("started", run.incarnation);
    const timeoutMs = this.options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    try {
      // A child that exits during the start step ends it (its timer must not outlive the child).
      const exitedFirst = run.done.then(() => {
        throw new Error("the child exited during the start step");
      });
      await withTimeout(
        Promise.race([Promise.resolve().then(() => this.options.onStarted?.(run.incarnation)), exitedFirst]),
        timeoutMs,
        () => new StartTimeoutError(timeoutMs),
      );
    } catch (error) {
      // An exit during the start step is a crash, handled in onRunDone; a stop handles itself.
      if (run !== this.run || run.requested || run.hasExited) return;
      run.requested = true;
      const message = (error as Error).message;
      this.logger.warn(
        { extension: this.id, pid: run.pid, err: message },
        "start step failed; killing the child",
      );
      run.abort(error);
      run.kill("SIGKILL");
      const exit = await run.done;
      if (run !== this.run || this.currentState !== "starting") return;
      if (error instanceof FatalStartError) this.enterFailed(message, exit);
      else this.onCrash(`start failed: ${message}`, exit);
      return;
    }
    if (run !== this.run || run.hasExited || run.requested || this.currentState !== "starting") return;
    this.setState("running");
    this.emit("running", run.incarnation);
    for (const waiter of this.waiters.splice(0)) waiter.resolve(run.incarnation);
  }

  // --- crashes -----------------------------------------------------------------------------------

  private onRunDone(run: ChildRun, exit: ChildExit): void {
    // The child's last words are in; what the budget held back is summarised now, not later.
    this.stderrLog.flush();
    this.emit("exit", { ...exit, incarnation: run.incarnation.number, pid: run.pid });
    if (exit.requested || run !== this.run) return;
    if (this.currentState === "starting" || this.currentState === "running")
      this.onCrash(describeExit(exit), exit);
  }

  private onCrash(description: string, exit: ChildExit): void {
    const verdict = this.tracker.record(Date.now());
    if (verdict.action === "give_up") {
      this.enterFailed(`${description}; ${verdict.reason}`, exit);
      return;
    }
    this.logger.warn(
      { extension: this.id, attempt: verdict.attempt, delayMs: verdict.delayMs },
      `restarting after ${verdict.delayMs} ms`,
    );
    this.setState("backoff", { reason: description, delayMs: verdict.delayMs });
    const deferred = new StartDeferredError(this.id, description, verdict.delayMs, this.stderrTail());
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.firstAttemptOnly) waiter.reject(deferred);
      return !waiter.firstAttemptOnly;
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.currentState !== "backoff") return;
      this.setState("starting", { reason: `restart ${verdict.attempt}` });
      this.launch();
    }, verdict.delayMs);
  }

  private enterFailed(reason: string, exit?: ChildExit): void {
    this.clearRestartTimer();
    const failure: FailureInfo = { reason, stderrTail: this.stderrTail(), ...(exit ? { exit } : {}) };
    this.lastFailure = failure;
    this.logger.error(
      { extension: this.id, reason, stderrTail: failure.stderrTail.slice(-20) },
      "child failed",
    );
    this.setState("failed", { reason });
    this.emit("failed", failure);
    for (const waiter of this.waiters.splice(0)) waiter.reject(new SupervisorFailedError(this.id, failure));
  }

  // --- stopping ----------------------------------------------------------------------------------

  private async stopNow(options: StopOptions): Promise<void> {
    const reason = options.reason ?? "stop requested";
    const state = this.currentState;
    if (state === "idle" || state === "stopped" || state === "failed") return;
    this.clearRestartTimer();
    const run = this.run;
    if (state === "backoff" || run === undefined || run.hasExited) {
      if (run !== undefined) await run.done;
      this.enterStopped(reason);
      return;
    }
    this.setState("stopping", { reason });
    run.requested = true;
    // While the child still lives, its parent links lead to everything it started.
    run.rememberLineage();
    const fields = { extension: this.id, pid: run.pid };
    const shutdown = options.shutdown ?? this.options.shutdown;
    if (state === "running" && shutdown !== undefined) {
      const gracefulMs =
        options.gracefulTimeoutMs ?? this.options.gracefulTimeoutMs ?? DEFAULT_GRACEFUL_TIMEOUT_MS;
      const stepController = new AbortController();
      try {
        await withTimeout(
          Promise.resolve().then(() => shutdown(run.incarnation, stepController.signal)),
          gracefulMs,
          () => new Error(`graceful step timed out after ${gracefulMs} ms`),
        );
      } catch (error) {
        stepController.abort(error);
        this.logger.warn({ ...fields, err: (error as Error).message }, "graceful shutdown step failed");
      }
      if (this.options.termAfterShutdown === true && !run.hasExited) run.kill("SIGTERM");
    } else {
      // Without a protocol-level goodbye, SIGTERM is the polite way to ask.
      run.kill("SIGTERM");
    }
    const graceMs = options.exitGraceMs ?? this.options.exitGraceMs ?? DEFAULT_EXIT_GRACE_MS;
    if (!(await settlesWithin(run.done, graceMs))) {
      this.logger.warn(
        fields,
        `still running ${graceMs} ms after the shutdown request; sending SIGKILL to its process group`,
      );
      run.kill("SIGKILL");
      if (!(await settlesWithin(run.done, KILL_WAIT_MS)))
        this.logger.error(fields, "child did not exit after SIGKILL");
    }
    run.abort(new Error("stopped"));
    this.enterStopped(reason);
  }

  private enterStopped(reason: string): void {
    // A crash noticed while this stop waited may have scheduled a restart; the stop wins.
    this.clearRestartTimer();
    this.setState("stopped", { reason });
    for (const waiter of this.waiters.splice(0)) waiter.reject(new StartAbortedError(this.id));
  }

  // --- helpers -----------------------------------------------------------------------------------

  private setState(to: SupervisorState, extra: { reason?: string; delayMs?: number } = {}): void {
    const from = this.currentState;
    this.currentState = to;
    this.emit("state", { from, to, ...extra });
  }

  private clearRestartTimer(): void {
    if (this.restartTimer !== undefined) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }
}
