/**
 * Everything a child started, found even when it left the child's process group.
 *
 * Killing a child's process group misses what escaped it: `setsid` (another group and another
 * session) or `setpgid`. There is no cgroup to ask, and a child subreaper (prctl) is out of reach
 * of Node without a native addon, so nexo marks and follows a child's lineage three ways:
 *
 * 1. **The group**: every child leads its own process group.
 * 2. **A tag in the environment**: each child starts with `NEXO_PROCESS_TAG=<run>.<n>`; whatever it
 *    starts inherits it (setsid and double forks keep the environment), and /proc/<pid>/environ
 *    shows the environment a process started with, whatever it did to its variables since. The
 *    `<run>` part names this daemon process, which is how the next start finds what a killed
 *    daemon left behind.
 * 3. **Parent links**: the descendants (by ppid) of everything found above, which catches a
 *    process started with a scrubbed environment as long as its parent is still there.
 *
 * What none of the three finds: a process that both scrubbed its environment and lost its parent
 * link. The bubblewrap sandbox closes that gap too (its private pid namespace ends with the child).
 * Processes are searched only when a child stops or dies, never on a hot path.
 */
import { randomBytes } from "node:crypto";
import { signalGroup, signalProcess } from "./group.js";
import { environHas, isLive, type ProcStat, processTable } from "./proc.js";

export const PROCESS_TAG_VAR = "NEXO_PROCESS_TAG";

let token: string | undefined;

/**
 * Names this daemon process in the tags of the children it starts. Chosen on first use, not when
 * the module loads: `nexo agent` starts from a startup snapshot whose modules were evaluated once,
 * at build time (cli/snapshot-start.ts), and a token chosen then would be every process's.
 */
export function runToken(): string {
  token ??= randomBytes(6).toString("hex");
  return token;
}

let tagsIssued = 0;

/** A fresh tag for one child of this process: `<run token>.<n>`. */
export function newProcessTag(): string {
  tagsIssued += 1;
  return `${runToken()}.${tagsIssued}`;
}

/** A process seen earlier, to be found again only if it is still the same one (pid reuse). */
export interface KnownProcess {
  pid: number;
  startTicks: string;
}

/** How to recognise one child's processes. */
export interface LineageMarks {
  /** The child's process group (= its pid). */
  pgid?: number;
  /** `NEXO_PROCESS_TAG=<tag>` in the environment, exactly. */
  tag?: string;
  /** Any tag of the run with this token: every child of that daemon process. */
  run?: string;
  /** Processes recorded earlier (e.g. the child's descendants while it still lived). */
  known?: readonly KnownProcess[];
}

/**
 * The live processes that belong to any of `marks`, with every descendant of theirs, never this
 * process itself nor pid 1. `undefined` without a readable /proc (callers then fall back to
 * signalling the groups).
 */
export function lineageOf(marks: readonly LineageMarks[], table = processTable()): ProcStat[] | undefined {
  if (table === undefined) return undefined;
  const live = table.filter((stat) => isLive(stat) && stat.pid !== process.pid && stat.pid > 1);
  const byPid = new Map(live.map((stat) => [stat.pid, stat]));
  const found = new Map<number, ProcStat>();
  const groups = new Set(marks.flatMap((mark) => (mark.pgid === undefined ? [] : [mark.pgid])));
  // Each variable in /proc/<pid>/environ ends with a NUL, which makes a tag match exact.
  const tags = marks.flatMap((mark) => [
    ...(mark.tag === undefined ? [] : [`${PROCESS_TAG_VAR}=${mark.tag}\0`]),
    ...(mark.run === undefined ? [] : [`${PROCESS_TAG_VAR}=${mark.run}.`]),
  ]);
  for (const stat of live) {
    if (groups.has(stat.pgrp) || environHas(stat.pid, tags)) found.set(stat.pid, stat);
  }
  for (const known of marks.flatMap((mark) => mark.known ?? [])) {
    const stat = byPid.get(known.pid);
    if (stat !== undefined && stat.startTicks === known.startTicks) found.set(stat.pid, stat);
  }
  const children = new Map<number, ProcStat[]>();
  for (const stat of live) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const queue = [...found.values()];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!.pid) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child);
      queue.push(child);
    }
  }
  return [...found.values()];
}

/**
 * Sends `signal` to the groups of `marks` and to every process of their lineage. Synchronous, so
 * it also works inside an `exit` listener. Says how many groups and which processes were signalled.
 */
export function signalLineage(
  marks: readonly LineageMarks[],
  signal: NodeJS.Signals,
): { groups: number; pids: number[] } {
  // Found before anything is signalled: a group member killed first would no longer be seen.
  const lineage = lineageOf(marks) ?? [];
  let groups = 0;
  for (const mark of marks) {
    if (mark.pgid !== undefined && trySignal(() => signalGroup(mark.pgid!, signal))) groups += 1;
  }
  const pids: number[] = [];
  for (const stat of lineage) {
    if (trySignal(() => signalProcess(stat.pid, signal))) pids.push(stat.pid);
  }
  return { groups, pids };
}

/** The processes of a lineage as they are now, to be found again later even without the tag. */
export function snapshotLineage(marks: readonly LineageMarks[]): KnownProcess[] {
  return (lineageOf(marks) ?? []).map(({ pid, startTicks }) => ({ pid, startTicks }));
}

function trySignal(send: () => boolean): boolean {
  try {
    return send();
  } catch {
    // EPERM: not ours to stop (e.g. a setuid program); the others still get their signal.
    return false;
  }
}
