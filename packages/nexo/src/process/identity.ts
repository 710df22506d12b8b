/**
 * Telling whether a pid written down earlier still names the same process, without signalling it.
 *
 * A pid alone is not an identity: pids are recycled, a reboot starts counting again, and a
 * container sees its own pid numbers. On Linux the kernel gives three facts that pin a process
 * down: the boot id (changes at every boot), the pid namespace (which numbering the pid belongs to)
 * and the process start time in clock ticks since boot (field 22 of /proc/<pid>/stat), which a
 * recycled pid cannot share with the process it replaced. Elsewhere (no /proc) only the pid and
 * the host name are known, and the checks degrade to "is some process with that pid alive".
 */
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { isLive, readProcStat } from "./proc.js";

/** Who a process is, as recorded in a lock file or the child ledger. Unknown facts are null (no /proc). */
export interface ProcessIdentity {
  pid: number;
  hostname: string;
  /** /proc/sys/kernel/random/boot_id. */
  bootId: string | null;
  /** The target of /proc/<pid>/ns/pid, e.g. `pid:[4026531836]`. */
  pidNamespace: string | null;
  /** Start time in clock ticks since boot, as the decimal string the kernel prints. */
  startTicks: string | null;
}

/** What /proc says about a pid right now. */
export type PidProbe =
  /** No such process, or only its zombie (it has exited and waits to be reaped). */
  | { alive: false }
  /** A live process; `startTicks` is null when /proc could not tell. */
  | { alive: true; startTicks: string | null };

export function currentProcessIdentity(): ProcessIdentity {
  return {
    pid: process.pid,
    hostname: hostname(),
    bootId: readTrimmed("/proc/sys/kernel/random/boot_id"),
    pidNamespace: readLink("/proc/self/ns/pid"),
    startTicks: readProcStat(process.pid)?.startTicks ?? null,
  };
}

/**
 * Is `pid` a live process, and since when? Uses signal 0, which checks existence and permission
 * and delivers nothing: we never send a real signal to a pid read from a file.
 */
export function probePid(pid: number): PidProbe {
  if (!Number.isSafeInteger(pid) || pid < 1) {
    // 0 and negative numbers address process groups in kill(2); they never name one process.
    throw new RangeError(`not a process id: ${pid}`);
  }
  let foreign = false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return { alive: false };
    if (code !== "EPERM") throw error;
    // It exists but belongs to another user; that still counts as alive.
    foreign = true;
  }
  const stat = readProcStat(pid);
  if (stat === undefined) {
    // With /proc mounted, a process we may signal but cannot stat has exited between the two
    // checks. Another user's process may be hidden from us (hidepid), and without /proc there
    // is nothing to read: alive, start time unknown.
    if (!foreign && readLink("/proc/self") !== null) return { alive: false };
    return { alive: true, startTicks: null };
  }
  // A zombie answers signal 0 but is already dead; a daemon killed by SIGKILL is one until reaped.
  if (!isLive(stat)) return { alive: false };
  return { alive: true, startTicks: stat.startTicks };
}

export type IdentityVerdict =
  | { state: "alive"; reason: string }
  | { state: "dead"; reason: string }
  | { state: "unknown"; reason: string };

/**
 * Whether the process `recorded` describes still runs, judged from the process `self`. Three
 * answers on purpose: "unknown" (it ran on another host, or in another pid namespace, so its pid
 * means nothing here) must be treated as "maybe alive" by anyone about to act on a "dead".
 */
export function judgeIdentity(recorded: ProcessIdentity, self: ProcessIdentity): IdentityVerdict {
  const bootsKnown = recorded.bootId !== null && self.bootId !== null;
  if (bootsKnown && recorded.bootId !== self.bootId) {
    if (recorded.hostname === self.hostname) {
      return { state: "dead", reason: `host ${self.hostname} has rebooted since` };
    }
    return { state: "unknown", reason: `it runs on host ${recorded.hostname}, not on this one` };
  }
  // Same kernel but another host name is a container on this machine: the pid namespace decides.
  if (!bootsKnown && recorded.hostname !== self.hostname) {
    return { state: "unknown", reason: `it runs on host ${recorded.hostname}, not on this one` };
  }
  if (
    recorded.pidNamespace !== null &&
    self.pidNamespace !== null &&
    recorded.pidNamespace !== self.pidNamespace
  ) {
    return {
      state: "unknown",
      reason: `it runs in another pid namespace (${recorded.pidNamespace}, e.g. another container)`,
    };
  }
  const probe = probePid(recorded.pid);
  if (!probe.alive) return { state: "dead", reason: `pid ${recorded.pid} is not running` };
  if (recorded.startTicks !== null && probe.startTicks !== null && probe.startTicks !== recorded.startTicks) {
    return {
      state: "dead",
      reason: `pid ${recorded.pid} now belongs to another process (it started at a different time)`,
    };
  }
  return { state: "alive", reason: `pid ${recorded.pid} is running` };
}

function readTrimmed(path: string): string | null {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
