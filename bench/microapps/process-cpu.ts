/**
 * CPU time of the processes under this one (the contenders' children), read from /proc, so a
 * benchmark can say how much CPU a call costs on both sides of the pipe — a figure a loaded
 * machine disturbs far less than wall-clock rates, since waiting for a core costs no CPU. Children
 * that sit idle while another contender runs add nothing. Linux only: elsewhere
 * `childrenCpuMicros` answers undefined and the benchmark leaves the CPU rows out.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second for /proc times (USER_HZ, 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  ppid: number;
  cpuTicks: number;
}

function statOf(pid: string): ProcStat | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: the fields after its last ")".
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // After the name: state(0) ppid(1) … utime(11) stime(12).
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

/**
 * User + system CPU of every process under this one, in microseconds (this process's own is
 * `process.cpuUsage()`: read it inside the window this scan leaves, so the scan is not counted).
 */
export function childrenCpuMicros(): number | undefined {
  if (!existsSync("/proc/self/stat")) return undefined;
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(entry);
    if (stat !== undefined) stats.set(Number(entry), stat);
  }
  let ticks = 0;
  const parents = [process.pid];
  while (parents.length > 0) {
    const parent = parents.pop()!;
    for (const [pid, stat] of stats)
      if (stat.ppid === parent) {
        ticks += stat.cpuTicks;
        parents.push(pid);
      }
  }
  return (ticks * 1e6) / TICKS_PER_SECOND;
}

/** The pids of this process's direct children (Linux; empty elsewhere). */
export function childPids(): Set<number> {
  const pids = new Set<number>();
  if (!existsSync("/proc/self/stat")) return pids;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    if (statOf(entry)?.ppid === process.pid) pids.add(Number(entry));
  }
  return pids;
}
