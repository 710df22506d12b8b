/**
 * Milliseconds on a monotonic clock, for durations and deadlines: what `performance.now()` gives,
 * without the global `performance`, whose first use loads node:perf_hooks and its internal modules
 * for the process's life (~0.2 MB of an idle daemon that needs none of it; docs/performance.md,
 * "Ninth pass (b)"). Only the difference between two readings means anything.
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
