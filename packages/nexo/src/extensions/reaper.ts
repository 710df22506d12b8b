/**
 * The daemon never exits leaving a child behind.
 *
 * Every child runs as the leader of its own process group and is registered, with the tag its
 * lineage carries, in the process registry (process/registry.ts) while it may have live processes.
 * `installExitHooks` makes the process SIGKILL every registered child with its whole lineage —
 * group, tagged escapees (setsid), descendants — synchronously, on the way out: on `exit` (which
 * Node also emits after an uncaught exception or unhandled rejection), on a fatal uncaught
 * exception, and on SIGINT/SIGTERM.
 *
 * Not covered here, because no code runs: the daemon itself being SIGKILLed. Sandboxed children
 * still die then (bwrap's --die-with-parent); the others see stdin close, which every nexo SDK
 * treats as shutdown, and whatever ignores that is reaped at the next start from the child ledger
 * (process/ledger.ts).
 */
import { liveProcessGroups, type ProcessGroupRegistry } from "../process/registry.js";

/** Signals a whole process group; false when it no longer exists. */
export { signalGroup as killProcessGroup } from "../process/group.js";
export { liveProcessGroups, ProcessGroupRegistry } from "../process/registry.js";

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
