/**
 * The vocabulary of the child-process supervisor: what it spawns, what each started process looks
 * like to its owner, the states and events, and the typed errors of `start()`.
 */
import type { Readable, Writable } from "node:stream";

/** What to run. `env` is complete: nothing from the daemon's environment is added to it. */
export interface SpawnSpec {
  command: string;
  args?: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
}

/**
 * - `idle`: never started. `starting`: spawned, the owner's start step (handshake) runs.
 * - `running`: the start step succeeded. `backoff`: crashed, waiting to restart.
 * - `stopping` → `stopped`: an orderly stop. `failed`: crash loop, respawn off, or a fatal start
 *   error; it stays failed until `start()` is called again.
 */
export type SupervisorState = "idle" | "starting" | "running" | "backoff" | "stopping" | "stopped" | "failed";

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all (ENOENT, EACCES, …). */
  error?: Error;
  /** True when the supervisor asked for this exit (stop, or tearing down a failed start). */
  requested: boolean;
}

/** One started process. A restart produces a new incarnation with new streams. */
export interface Incarnation {
  /** 1 for the first process, then 2, 3, … across restarts. */
  readonly number: number;
  readonly pid: number;
  /** The child's stdin; hand it to a JsonRpcPeer as `output`. */
  readonly stdin: Writable;
  /** The child's stdout; hand it to a JsonRpcPeer as `input`. */
  readonly stdout: Readable;
  /** Aborted when this incarnation is being torn down or has exited. */
  readonly signal: AbortSignal;
  /** Settles once the process has exited, its group is gone and its pipes are closed. */
  readonly exited: Promise<ChildExit>;
}

export interface StateChange {
  from: SupervisorState;
  to: SupervisorState;
  reason?: string;
  /** With `to: "backoff"`: how long until the restart. */
  delayMs?: number;
}

export interface FailureInfo {
  reason: string;
  /** The last stderr lines, oldest first, for the operator. */
  stderrTail: string[];
  exit?: ChildExit;
}

export interface ExitEvent extends ChildExit {
  incarnation: number;
  pid: number | undefined;
}

export interface SupervisorEvents {
  state: [StateChange];
  /** A process was spawned; the owner's start step is about to run on it. */
  started: [Incarnation];
  running: [Incarnation];
  exit: [ExitEvent];
  failed: [FailureInfo];
  stderr: [line: string, incarnation: number];
}

/** The subset of pino's API the supervisor logs through (pino loggers fit as they are). */
export interface SupervisorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Thrown by the owner's start step to say that restarting cannot help (e.g. the plugin answered
 * `initialize` with another plugin's id): the child is killed and the supervisor goes to `failed`.
 */
export class FatalStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FatalStartError";
  }
}

/** `start()` gave up: the supervisor reached `failed` before any incarnation was running. */
export class SupervisorFailedError extends Error {
  readonly id: string;
  readonly reason: string;
  readonly stderrTail: string[];
  constructor(id: string, failure: FailureInfo) {
    super(`${id}: ${failure.reason}`);
    this.name = "SupervisorFailedError";
    this.id = id;
    this.reason = failure.reason;
    this.stderrTail = failure.stderrTail;
  }
}

/** `start()` was overtaken by `stop()` before any incarnation was running. */
export class StartAbortedError extends Error {
  readonly id: string;
  constructor(id: string) {
    super(`${id}: stopped before it was running`);
    this.name = "StartAbortedError";
    this.id = id;
  }
}

/**
 * `start({firstAttemptOnly})` gave up waiting: the first attempt failed and a restart is scheduled.
 * The supervisor keeps trying in the background; this is not a final failure.
 */
export class StartDeferredError extends Error {
  readonly id: string;
  /** Why the attempt failed ("exited with code 1", "start failed: …"). */
  readonly reason: string;
  /** How long until the next attempt. */
  readonly retryInMs: number;
  readonly stderrTail: string[];
  constructor(id: string, reason: string, retryInMs: number, stderrTail: string[]) {
    super(`${id}: ${reason}; restarting in ${retryInMs} ms`);
    this.name = "StartDeferredError";
    this.id = id;
    this.reason = reason;
    this.retryInMs = retryInMs;
    this.stderrTail = stderrTail;
  }
}

/** The owner's start step did not finish within `startTimeoutMs`. */
export class StartTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`the start step did not finish within ${timeoutMs} ms`);
    this.name = "StartTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** "exited with code 1", "was killed by SIGKILL", "could not be spawned (…)". */
export function describeExit(exit: Pick<ChildExit, "code" | "signal" | "error">): string {
  if (exit.error !== undefined) return `could not be spawned (${exit.error.message})`;
  if (exit.signal !== null) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}
