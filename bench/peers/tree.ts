/**
 * Peak resident memory of a process tree (Linux): the sum of VmHWM (each process' own peak) over
 * the process and its live descendants. An agent that runs its tools in child processes (Codex
 * runs a shell per command) pays for them too; children that already exited are not counted, so
 * the figure is a lower bound for such an agent — it never flatters nexo, which runs Read in-process.
 */
import { readdirSync, readFileSync } from "node:fs";
import { round } from "../lib.js";

/** A child is listed under the thread that forked it: a multi-threaded agent forks from any. */
function children(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(" ");
      for (const child of listed) if (child.trim() !== "") out.push(Number(child));
    }
  } catch {
    // the process (or a thread) ended while we looked: what was listed is all there is
  }
  return out;
}

function peakKiB(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0; // exited between the listing and the read
  }
}

/** MiB, or NaN when the process is gone. */
export function treePeakRssMiB(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  const own = peakKiB(pid);
  if (own === 0) return Number.NaN;
  let total = 0;
  const queue = [pid];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    total += peakKiB(next);
    queue.push(...children(next));
  }
  return round(total / 1024, 1);
}
