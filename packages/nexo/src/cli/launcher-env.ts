/**
 * The settings bin/nexo gives `nexo start` for the daemon's own sake, taken back out of its
 * environment. The launcher starts the daemon with two malloc settings (MALLOC_ARENA_MAX,
 * MALLOC_MMAP_THRESHOLD_) when the operator chose none, and names the ones it set in
 * NEXO_LAUNCHER_SET. glibc reads them once, when the process starts, so by the time JavaScript runs
 * they have done their work; left in `process.env`, every program an agent runs through the Bash
 * tool (which inherits the daemon's environment less its secrets) would get the daemon's malloc
 * tuning too: one or two arenas for a multi-threaded compiler or database is a lock its threads
 * queue on. An operator's own value is not named, so it stays and is passed on as before.
 */

/** The only variables the launcher may set for the daemon alone. */
const LAUNCHER_TUNING: ReadonlySet<string> = new Set(["MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_"]);

/** Deletes from `env` what the launcher named as its own; returns the names deleted. */
export function forgetLauncherTuning(env: NodeJS.ProcessEnv = process.env): string[] {
  const named = env.NEXO_LAUNCHER_SET;
  if (named === undefined) return [];
  delete env.NEXO_LAUNCHER_SET;
  const forgotten = named.split(" ").filter((name) => LAUNCHER_TUNING.has(name) && env[name] !== undefined);
  for (const name of forgotten) delete env[name];
  return forgotten;
}
