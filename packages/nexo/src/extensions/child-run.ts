/**
 * One spawned process of a supervised child, from spawn until it is entirely gone.
 *
 * The process leads its own process group (`detached: true`), registered with the reaper while it
 * may have members. When the leader exits, the rest of its group is SIGKILLed at once: leftovers
 * must not outlive it, and must not hold its pipes open, because the pipes' EOF is what fails the
 * owner's in-flight requests. Only then is the run `done`. Deciding what an exit *means* (crash,
 * restart, stop) is the supervisor's job, not this file's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { settlesWithin } from "./bounded-wait.js";
import { killProcessGroup, type ProcessGroupRegistry } from "./reaper.js";
import { StderrLineSplitter } from "./stderr-capture.js";
import {
  type ChildExit,
  describeExit,
  type Incarnation,
  type SpawnSpec,
  type SupervisorLogger,
} from "./supervisor-types.js";

/** After the group is killed, pipes close at once unless a process escaped the group (setsid). */
const PIPE_CLOSE_WAIT_MS = 2_000;

export interface ChildRunOptions {
  id: string;
  number: number;
  spec: SpawnSpec;
  registry: ProcessGroupRegistry;
  logger: SupervisorLogger;
  maxStderrLineBytes: number;
  onStderrLine: (line: string, run: ChildRun) => void;
  /** The process is running (exec succeeded). */
  onSpawned: (run: ChildRun) => void;
  /** The run is over: the process exited (or never spawned), its group is dead, its pipes closed. */
  onDone: (run: ChildRun, exit: ChildExit) => void;
}

export class ChildRun {
  readonly incarnation: Incarnation;
  /** Undefined when the spawn failed outright (the `error` event then reports why). */
  readonly pid: number | undefined;
  /** Settles when the run is over, exactly when `onDone` is called. */
  readonly done: Promise<ChildExit>;
  /** Set by the supervisor when it tears this run down, so the exit is not taken for a crash. */
  requested = false;

  private readonly options: ChildRunOptions;
  private readonly child: ChildProcess;
  private readonly controller = new AbortController();
  private readonly closed: Promise<void>;
  private settle!: (exit: ChildExit) => void;
  private exitSeen = false;

  /** Spawns at once; throws only if child_process rejects the spec synchronously. */
  constructor(options: ChildRunOptions) {
    this.options = options;
    const { spec } = options;
    this.child = spawn(spec.command, [...(spec.args ?? [])], {
      env: { ...spec.env },
      cwd: spec.cwd,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.pid = this.child.pid;
    if (this.pid !== undefined) options.registry.add(this.pid, options.id);
    this.done = new Promise((resolve) => {
      this.settle = resolve;
    });
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
    this.incarnation = {
      number: options.number,
      pid: this.pid ?? -1,
      stdin: this.child.stdin!,
      stdout: this.child.stdout!,
      signal: this.controller.signal,
      exited: this.done,
    };
    this.wire();
  }

  /** The process has exited (its cleanup may still be running). */
  get hasExited(): boolean {
    return this.exitSeen;
  }

  /** Signals the whole process group; a group that is already gone is fine. */
  kill(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    try {
      killProcessGroup(this.pid, signal);
    } catch (error) {
      this.options.logger.error(
        { ...this.fields(), signal, err: (error as Error).message },
        "cannot signal the child's process group",
      );
    }
  }

  /** Aborts the incarnation's signal, telling the owner to drop its work on this process. */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  private fields() {
    return { extension: this.options.id, pid: this.pid, incarnation: this.options.number };
  }

  private wire(): void {
    const { child, options } = this;
    const splitter = new StderrLineSplitter(
      (line) => options.onStderrLine(line, this),
      options.maxStderrLineBytes,
    );
    child.stderr!.on("data", (chunk: Buffer) => splitter.push(chunk));
    child.stderr!.on("end", () => splitter.end());
    // A child that dies mid-write makes our end of a pipe fail (EPIPE); unobserved, that error
    // would be an uncaught exception in the daemon.
    for (const [name, stream] of [
      ["stdin", child.stdin],
      ["stdout", child.stdout],
      ["stderr", child.stderr],
    ] as const) {
      stream?.on("error", (error) =>
        options.logger.debug({ ...this.fields(), stream: name, err: error.message }, "pipe error"),
      );
    }
    child.once("spawn", () => {
      options.logger.info({ ...this.fields(), command: options.spec.command }, "child started");
      options.onSpawned(this);
    });
    child.on("error", (error) => {
      if (this.pid === undefined) void this.finish({ code: null, signal: null, error });
      else options.logger.warn({ ...this.fields(), err: error.message }, "child process error");
    });
    child.once("exit", (code, signal) => void this.finish({ code, signal }));
  }

  private async finish(status: Pick<ChildExit, "code" | "signal" | "error">): Promise<void> {
    if (this.exitSeen) return;
    this.exitSeen = true;
    // Whether the exit was asked for is decided by what was known when it happened.
    const requested = this.requested;
    const { logger, registry, onDone } = this.options;
    if (this.pid !== undefined) {
      this.kill("SIGKILL");
      if (!(await settlesWithin(this.closed, PIPE_CLOSE_WAIT_MS))) {
        logger.warn(this.fields(), "pipes still open after exit (a process escaped the group); closing them");
        for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream?.destroy();
      }
      registry.delete(this.pid);
    }
    const exit: ChildExit = { ...status, requested };
    this.abort(new Error(`child ${describeExit(exit)}`));
    const fields = { ...this.fields(), code: exit.code, signal: exit.signal };
    if (exit.requested) logger.info(fields, `child ${describeExit(exit)}`);
    else logger.warn(fields, `child ${describeExit(exit)} unexpectedly`);
    this.settle(exit);
    onDone(this, exit);
  }
}
