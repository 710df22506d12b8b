/**
 * Memory of processes as the kernel sees it, from /proc: what an operator's `ps` or `top` shows,
 * not what the V8 heap believes. Linux only, like the deployments the goals are about.
 */
import { readdirSync, readFileSync } from "node:fs";

/** The kernel counts in KiB; the goals are in MB (10^6 bytes), the stricter reading of "MB". */
const KIB = 1024;
const MB = 1_000_000;

export interface ResidentMemory {
  /** Resident set size now (VmRSS), in MB. */
  rssMB: number;
  /** The highest resident set size since the process started (VmHWM), in MB. */
  peakMB: number;
}

/** Throws when the process is gone: a memory figure of a dead process would be a lie. */
export function residentMemory(pid: number): ResidentMemory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rssMB: statusField(status, "VmRSS", pid), peakMB: statusField(status, "VmHWM", pid) };
}

function statusField(status: string, field: string, pid: number): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
  if (match === null)
    throw new Error(`/proc/${pid}/status has no ${field} line (a zombie or a kernel thread?)`);
  return (Number(match[1]) * KIB) / MB;
}

/**
 * Resident size of glibc's main malloc heap (the `[heap]` mapping, grown with brk), MB; 0 when the
 * process has none. An idle daemon holds ~2.3 MB there; a boot whose heap kept the ~6 MB zone of the
 * boot chunk's compile reads ~8.5 (docs/performance.md, "Eleventh pass"), so a row's outlier can be
 * told from V8's own memory.
 */
export function mallocHeapMB(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, "utf8");
  const start = smaps.search(/ \[heap\]\n/);
  if (start === -1) return 0;
  const match = /^Rss:\s+(\d+) kB$/m.exec(smaps.slice(start));
  if (match === null) throw new Error(`/proc/${pid}/smaps has no Rss line for [heap]`);
  return (Number(match[1]) * KIB) / MB;
}

/** Every live process whose parent chain reaches `pid` (plugins and whatever they spawned). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // The command name may contain spaces and parentheses: the fields start after the last ") ".
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    const parent = Number(fields[1]);
    const list = children.get(parent) ?? [];
    list.push(Number(entry));
    children.set(parent, list);
  }
  const found: number[] = [];
  const pending = [...(children.get(pid) ?? [])];
  while (pending.length > 0) {
    const next = pending.pop()!;
    found.push(next);
    pending.push(...(children.get(next) ?? []));
  }
  return found;
}

/** The kernel's short name of a process (`/proc/<pid>/comm`), undefined once it is gone. */
export function commandName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(") ") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** The summed resident memory of several processes; those that exited meanwhile count as 0. */
export function totalResident(pids: readonly number[]): ResidentMemory {
  let rssMB = 0;
  let peakMB = 0;
  for (const pid of pids) {
    try {
      const m = residentMemory(pid);
      rssMB += m.rssMB;
      peakMB += m.peakMB;
    } catch {
      // gone: it holds no memory any more
    }
  }
  return { rssMB, peakMB };
}
