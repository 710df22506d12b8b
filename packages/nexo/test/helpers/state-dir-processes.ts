/**
 * Cleanup for tests whose subject starts processes the test never holds a handle to: `nexo chat`
 * and `npm start` start a daemon of their own, which outlives a chat killed with SIGKILL. A test
 * that fails half-way must still leave nothing running, so the cleanup finds them the way they were
 * made: every such process inherits the test's NEXO_STATE_DIR (Linux's /proc; elsewhere nothing is
 * found and nothing is killed).
 */
import { readdirSync, readFileSync } from "node:fs";

/** The pids of this user's processes whose environment holds `NEXO_STATE_DIR=<stateDir>`. */
export function processesOfStateDir(stateDir: string): number[] {
  const mark = `NEXO_STATE_DIR=${stateDir}`;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "utf8");
    } catch {
      continue; // gone meanwhile, or another user's
    }
    if (environ.split("\0").includes(mark)) found.push(pid);
  }
  return found;
}

/** SIGKILLs every process `processesOfStateDir` finds; returns their pids. */
export function killProcessesOfStateDir(stateDir: string): number[] {
  const pids = processesOfStateDir(stateDir);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return pids;
}
