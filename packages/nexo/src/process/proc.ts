/**
 * Reading Linux's /proc: one process's stat line, the whole process table, and whether a process's
 * environment carries a given variable. Synchronous on purpose — the exit hooks that use it run
 * inside an `exit` listener, where nothing asynchronous happens — and only used when children
 * start or stop, never on a hot path. Without /proc (not Linux) every reader answers "unknown"
 * (`undefined`), and callers fall back to what signals alone can tell.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface ProcStat {
  pid: number;
  /** R, S, D, Z (zombie), X (dead), T, … */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Start time in clock ticks since boot (field 22), as the decimal string the kernel prints. */
  startTicks: string;
}

/** The fields of a /proc/<pid>/stat line; the command name may contain spaces and parentheses. */
export function parseProcStat(line: string): Omit<ProcStat, "pid"> | undefined {
  // After "(comm) " come the fields from 3 on: state, ppid, pgrp, session, …, starttime (22).
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const [ppid, pgrp, session] = [fields[1], fields[2], fields[3]].map(Number);
  const startTicks = fields[19];
  if (state === undefined || startTicks === undefined || !/^\d+$/.test(startTicks)) return undefined;
  if (!Number.isInteger(ppid) || !Number.isInteger(pgrp) || !Number.isInteger(session)) return undefined;
  return { state, ppid: ppid!, pgrp: pgrp!, session: session!, startTicks };
}

/** One process's stat, or undefined when it does not exist (or /proc cannot be read). */
export function readProcStat(pid: number): ProcStat | undefined {
  let line: string;
  try {
    line = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const fields = parseProcStat(line.trim());
  return fields === undefined ? undefined : { pid, ...fields };
}

/** A zombie has exited and only waits to be reaped; it counts as gone. */
export function isLive(stat: Pick<ProcStat, "state">): boolean {
  return stat.state !== "Z" && stat.state !== "X";
}

/** Every process /proc shows now, or undefined without a readable /proc. */
export function processTable(): ProcStat[] | undefined {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const table: ProcStat[] = [];
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue; // not a pid directory
    const stat = readProcStat(Number(name));
    if (stat !== undefined) table.push(stat); // else it exited while we looked
  }
  return table;
}

/**
 * Whether the environment `pid` started with holds a variable whose `NAME=value` text begins with
 * one of `prefixes` (e.g. `NEXO_PROCESS_TAG=3f2a.7`). False when it cannot be read: another user's
 * process, or one that has exited.
 */
export function environHas(pid: number, prefixes: readonly string[]): boolean {
  if (prefixes.length === 0) return false;
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  for (const prefix of prefixes) {
    const needle = Buffer.from(prefix);
    for (let at = environ.indexOf(needle); at !== -1; at = environ.indexOf(needle, at + 1)) {
      if (at === 0 || environ[at - 1] === 0) return true;
    }
  }
  return false;
}
