/**
 * Cleanup for tests whose subject starts processes the test never holds a handle to: `nexo chat`
 * and `npm start` start a daemon of their own, which outlives a chat killed with SIGKILL. A test
 * that fails half-way must still leave nothing running, so the cleanup finds them the way they were
 * made: every such process inherits the test's NEXO_STATE_DIR (Linux's /proc; elsewhere nothing is
 * found and nothing is killed).
 */
import { existsSync } from "node:fs";
import { pidsWhose } from "../fixtures/processes.js";

/** The pids of this user's live processes whose environment holds `NEXO_STATE_DIR=<stateDir>`. */
export function processesOfStateDir(stateDir: string): number[] {
  if (!existsSync("/proc/self/environ")) return [];
  const mark = `NEXO_STATE_DIR=${stateDir}`;
  return pidsWhose("environ", (environ) => environ.split("\0").includes(mark));
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
