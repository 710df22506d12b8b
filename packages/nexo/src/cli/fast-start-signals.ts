/**
 * A fast start's signals (cli/agent-fast.ts, cli/app-server-fast.ts) until its door has its own:
 * no turn can run yet, so SIGTERM or SIGINT simply ends the process with status 0, the way the
 * door ends an idle one.
 *
 * The hand-over starts the door first, which installs its handlers before its first await, and
 * takes these away only then. Taken away first, they left a moment with no listener: Node then
 * closes its signal watcher, and a signal already caught but not yet dispatched (one that came
 * while the door loaded) was dropped with it, and the process sat idle, signalled, until killed.
 */
export function exitOnSignalUntilHandedOver(): <T>(startDoor: () => Promise<T>) => Promise<T> {
  const leave = (): void => process.exit(0);
  process.once("SIGTERM", leave);
  process.once("SIGINT", leave);
  return (startDoor) => {
    const started = startDoor();
    process.off("SIGTERM", leave);
    process.off("SIGINT", leave);
    return started;
  };
}
