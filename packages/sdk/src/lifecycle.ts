/**
 * How a child stops, plugin or microapp, whatever triggered it (a shutdown request, stdin EOF, a
 * signal):
 *   1. stop taking new work (the owner reads `stopping` and refuses new requests and events);
 *   2. fail the child's own pending calls to the daemon (`abandonOwnCalls`);
 *   3. wait for the in-flight handlers — at most `drainTimeoutMs`; stragglers are abandoned
 *      (requests answered with an error, signals aborted) and named on stderr;
 *   4. run `onShutdown`, within the same bound; a failure is logged;
 *   5. for a shutdown request: reply `{ok: true}`, wait for it to be written, stop reading.
 * Stdin keeps being read during the drain, so a handler's call to the daemon made during the drain
 * is answered instead of stalling until its timeout. Unlike the upstream SDK, the wait is bounded:
 * one hung handler cannot hold the shutdown reply hostage until the daemon's SIGKILL.
 */
import type { Writable } from "node:stream";
import type { JsonRpcPeer } from "@nexo/wire";
import { PluginError } from "./errors.js";
import type { InflightTasks } from "./inflight.js";
import type { StderrLog } from "./log.js";
import { flushStdoutGuard } from "./stdout-guard.js";

/** Work still running when the shutdown drain bound expired. */
export class AbandonedError extends PluginError {
  constructor(boundMs: number, kind: ChildKind = "plugin") {
    super(`abandoned: the ${kind} shut down before this call finished (drain bound ${boundMs} ms)`);
    this.name = "AbandonedError";
  }
}

export type ChildKind = "plugin" | "microapp";

export interface LifecycleOptions {
  kind: ChildKind;
  tasks: InflightTasks;
  drainTimeoutMs: number;
  log: StderrLog;
  onShutdown?: () => unknown;
  /** Step 2: fail the child's own pending calls to the daemon. */
  abandonOwnCalls(): void;
}

export class ChildLifecycle {
  private stoppingNow = false;
  private closingNow = false;
  private stopped: Promise<void> | undefined;

  constructor(private readonly options: LifecycleOptions) {}

  /** True once stopping has begun: new work is refused. */
  get stopping(): boolean {
    return this.stoppingNow;
  }

  /** True once a shutdown request has been acknowledged: the connection is being closed. */
  get closing(): boolean {
    return this.closingNow;
  }

  /** Steps 1-4, once; later calls get the same promise. */
  stop(trigger: string): Promise<void> {
    this.stopped ??= this.drainAndStop(trigger);
    return this.stopped;
  }

  private async drainAndStop(trigger: string): Promise<void> {
    const { tasks, drainTimeoutMs, log, kind } = this.options;
    this.stoppingNow = true;
    this.options.abandonOwnCalls();
    const stragglers = await tasks.drain(drainTimeoutMs);
    if (stragglers.length > 0) {
      tasks.abandon(new AbandonedError(drainTimeoutMs, kind));
      log.warning(
        `${trigger}: abandoned ${stragglers.length} handler(s) still running after ${drainTimeoutMs} ms`,
        { abandoned: stragglers },
      );
    }
    await this.runOnShutdown();
  }

  private async runOnShutdown(): Promise<void> {
    const { onShutdown, drainTimeoutMs, log } = this.options;
    if (!onShutdown) return;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      Promise.resolve()
        .then(onShutdown)
        .then(
          () => "done" as const,
          (error: unknown) => {
            log.failure("onShutdown", error);
            return "failed" as const;
          },
        ),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), drainTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      log.warning(`onShutdown did not finish within ${drainTimeoutMs} ms; going on without it`);
    }
  }

  /**
   * Serves until `done` resolves. SIGTERM / SIGINT (unless `handleSignals` is false) and the end
   * of the connection stop the child: its handlers' signals are aborted with `closedError`, steps
   * 1-4 run, then `finish` is called. Afterwards stdin is released and the stdout guard flushed.
   */
  async serveUntilDone(
    peer: JsonRpcPeer,
    done: Promise<void>,
    finish: () => void,
    options: { handleSignals: boolean; closedError: (reason: string) => Error },
  ): Promise<void> {
    const stopListening = options.handleSignals ? listenForSignals(peer, this.options.log) : () => {};
    peer.closed.then(({ reason }) => {
      if (this.closingNow) return;
      this.options.tasks.abortAll(options.closedError(reason));
      this.stop(reason).then(finish);
    });
    try {
      await done;
    } finally {
      stopListening();
      // The peer no longer listens, but a flowing stdin would keep the process alive.
      process.stdin.pause();
      flushStdoutGuard();
    }
  }

  /**
   * Step 5. The reply to `shutdown` is written by the peer once the handler's promise settles; a
   * macrotask later it has been handed to the writer. Wait until the writer has passed it on, then
   * stop reading (frames after the ack are ignored) and call `then`.
   */
  closeAfterReply(peer: JsonRpcPeer, output: Writable, then: () => void): void {
    if (this.closingNow) return;
    this.closingNow = true;
    setImmediate(async () => {
      const deadline = Date.now() + this.options.drainTimeoutMs;
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
      then();
    });
  }
}

/**
 * SIGTERM / SIGINT close the connection, which stops the child like stdin EOF does. A second
 * signal gets Node's default behaviour: the operator insists. Returns the function that stops
 * listening.
 */
export function listenForSignals(peer: JsonRpcPeer, log: StderrLog): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    stop();
    log.warning(`received ${signal}: draining in-flight work, then stopping`);
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

/** A positive integer option, or its default when absent. */
export function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new PluginError(`${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
