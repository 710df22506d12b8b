/**
 * The daemon never exits leaving a child behind.
 *
 * Every supervised child runs as the leader of its own process group; the supervisor registers the
 * group here while it may have live members. `installExitHooks` makes the process SIGKILL every
 * registered group, synchronously, on the way out: on `exit` (which Node also emits after an
 * uncaught exception or unhandled rejection), on a fatal uncaught exception, and on SIGINT/SIGTERM.
 *
 * Not covered, because no code runs: the daemon itself being SIGKILLed. Sandboxed children still die
 * then (bwrap's --die-with-parent); unsandboxed ones see stdin close, which every nexo SDK treats as
 * shutdown.
 */

/** Process groups of live children, by group id (= the leader's pid). */
export class ProcessGroupRegistry {
  private readonly groups = new Map<number, string>();

  /** `label` names the owner in diagnostics, e.g. the plugin id. */
  add(pgid: number, label: string): void {
    if (!Number.isInteger(pgid) || pgid <= 1) throw new RangeError(`not a process group id: ${pgid}`);
    this.groups.set(pgid, label);
  }

  delete(pgid: number): void {
    this.groups.delete(pgid);
  }

  has(pgid: number): boolean {
    return this.groups.has(pgid);
  }

  get size(): number {
    return this.groups.size;
  }

  entries(): Array<{ pgid: number; label: string }> {
    return [...this.groups].map(([pgid, label]) => ({ pgid, label }));
  }

  /**
   * Sends `signal` to every registered group and forgets them. Synchronous, so it is safe inside an
   * `exit` listener. Returns how many groups still existed.
   */
  killAll(signal: NodeJS.Signals = "SIGKILL"): number {
    let signalled = 0;
    for (const pgid of [...this.groups.keys()]) {
      this.groups.delete(pgid);
      try {
        if (killProcessGroup(pgid, signal)) signalled += 1;
      } catch {
        // On the way out there is nobody left to tell; keep killing the other groups.
      }
    }
    return signalled;
  }
}

/**
 * Signals a whole process group. Returns false when the group no longer exists; other failures
 * (EPERM) are thrown, because they mean a child we cannot stop.
 */
export function killProcessGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

/** The registry supervisors use unless given another. */
export const liveProcessGroups = new ProcessGroupRegistry();

export interface ExitHookOptions {
  registry?: ProcessGroupRegistry;
  /** Signals after which children are killed. Default SIGINT and SIGTERM; `[]` for none. */
  signals?: readonly NodeJS.Signals[];
}

/**
 * Installs the hooks and returns a function that removes them.
 *
 * Signal mode (documented behaviour): on a listed signal every group is SIGKILLed; then, if no
 * other listener for that signal is installed, the hook removes itself and re-sends the signal to
 * the process, so it terminates exactly as it would have without the hook (same signal, same exit
 * status). If the daemon has its own listener, the daemon decides when to exit, and the `exit` hook
 * still kills whatever is left then. A daemon that wants to shut plugins down gracefully on SIGTERM
 * handles SIGTERM itself (or passes `signals: []`), stops its supervisors, then exits.
 */
export function installExitHooks(options: ExitHookOptions = {}): () => void {
  const registry = options.registry ?? liveProcessGroups;
  const signals = options.signals ?? ["SIGINT", "SIGTERM"];

  const onExit = () => {
    registry.killAll("SIGKILL");
  };
  // Monitors run before Node's default handling; only kill when the exception will be fatal, i.e.
  // nobody installed an uncaughtException handler that keeps the process alive.
  const onUncaught = () => {
    if (process.listenerCount("uncaughtException") === 0) registry.killAll("SIGKILL");
  };
  const signalHandlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of signals) {
    const handler = () => {
      registry.killAll("SIGKILL");
      if (process.listenerCount(signal) === 1) {
        process.off(signal, handler);
        signalHandlers.delete(signal);
        process.kill(process.pid, signal);
      }
    };
    signalHandlers.set(signal, handler);
    process.on(signal, handler);
  }
  process.on("exit", onExit);
  process.on("uncaughtExceptionMonitor", onUncaught);

  return () => {
    process.off("exit", onExit);
    process.off("uncaughtExceptionMonitor", onUncaught);
    for (const [signal, handler] of signalHandlers) process.off(signal, handler);
    signalHandlers.clear();
  };
}
