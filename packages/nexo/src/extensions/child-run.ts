/**
 * One spawned process of a supervised child, from spawn until it is entirely gone.
 *
 * The process leads its own process group (`detached: true`) and carries a lineage tag in its
 * environment (process/lineage.ts), and is registered with the process registry while it may have
 * live processes. When the leader exits, the rest of its lineage — the group, anything that left
 * the group with setsid but carries the tag, their descendants — goes too: after a stop that asked
 * for it, SIGTERM first and SIGKILL after a grace; after a crash, SIGKILL at once. Leftovers must
 * not outlive the child, and must not hold its pipes open, because the pipes' EOF is what fails
 * the owner's in-flight requests. Only then is the run `done`. Deciding what an exit *means*
 * (crash, restart, stop) is the supervisor's job, not this file's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { signalGroup } from "../process/group.js";
import {
  type KnownProcess,
  type LineageMarks,
  lineageOf,
  newProcessTag,
  PROCESS_TAG_VAR,
  signalLineage,
  snapshotLineage,
} from "../process/lineage.js";
import type { ProcessGroupRegistry } from "../process/registry.js";
import { settlesWithin } from "./bounded-wait.js";
import { StderrLineSplitter } from "./stderr-capture.js";
import {
  type ChildExit,
  describeExit,
  type Incarnation,
  type SpawnSpec,
  type SupervisorLogger,
} from "./supervisor-types.js";

/** After the lineage is killed, pipes close at once unless a process escaped every mark. */
const PIPE_CLOSE_WAIT_MS = 2_000;
const LEFTOVER_POLL_MS = 25;

export interface ChildRunOptions {
  id: string;
  number: number;
  spec: SpawnSpec;
  registry: ProcessGroupRegistry;
  logger: SupervisorLogger;
  maxStderrLineBytes: number;
  /** After a requested stop, how long the leftovers get between SIGTERM and SIGKILL. */
  leftoverGraceMs: number;
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
  private readonly tag = newProcessTag();
  /** Descendants seen while the leader lived (rememberLineage), found again by pid and start time. */
  private known: KnownProcess[] = [];

  /** Spawns at once; throws only if child_process rejects the spec synchronously. */
  constructor(options: ChildRunOptions) {
    this.options = options;
    const { spec } = options;
    this.child = spawn(spec.command, [...(spec.args ?? [])], {
      env: { ...spec.env, [PROCESS_TAG_VAR]: this.tag },
      cwd: spec.cwd,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.pid = this.child.pid;
    if (this.pid !== undefined) options.registry.add(this.pid, options.id, { tag: this.tag });
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

  /** Signals the child's whole lineage (group, tagged escapees, descendants); what is gone is fine. */
  kill(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    try {
      signalLineage([this.marks()], signal);
    } catch (error) {
      this.options.logger.error(
        { ...this.fields(), signal, err: (error as Error).message },
        "cannot signal the child's processes",
      );
    }
  }

  /**
   * Remembers the processes the child has started so far, while its parent links still lead to
   * them: a process that scrubbed its environment and left the group is still found after the
   * leader is gone (as long as its pid keeps its start time). The supervisor calls it before a stop.
   */
  rememberLineage(): void {
    if (this.pid !== undefined && !this.exitSeen) this.known = snapshotLineage([this.marks()]);
  }

  /** Aborts the incarnation's signal, telling the owner to drop its work on this process. */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  private marks(): LineageMarks {
    return { ...(this.pid === undefined ? {} : { pgid: this.pid }), tag: this.tag, known: this.known };
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
      await this.endLeftovers(requested);
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

  /** The leader is gone: so must be the rest of its lineage (politely first, if this was a stop). */
  private async endLeftovers(requested: boolean): Promise<void> {
    if (requested) {
      const { groups, pids } = signalLineage([this.marks()], "SIGTERM");
      if (groups + pids.length === 0) return;
      const deadline = Date.now() + this.options.leftoverGraceMs;
      while (Date.now() < deadline && this.hasLeftovers()) await sleep(LEFTOVER_POLL_MS);
    }
    this.kill("SIGKILL");
  }

  private hasLeftovers(): boolean {
    const lineage = lineageOf([this.marks()]);
    // Without /proc only the group can be asked about.
    if (lineage === undefined) return this.pid !== undefined && signalGroup(this.pid, 0);
    return lineage.length > 0;
  }
}
