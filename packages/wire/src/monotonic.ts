/**
 * Milliseconds on a monotonic clock, for the peer's deadlines: what `performance.now()` gives,
 * without the global `performance`, whose first use loads node:perf_hooks and its internal modules
 * into the process for good (a daemon that talks to plugins needs none of it otherwise). Only the
 * difference between two readings means anything.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
