/**
 * Process groups: signalling one, and stopping one whole (SIGTERM, a grace period for cleanup,
 * then SIGKILL). Every child nexo starts leads a group of its own — plugins, microapps and MCP
 * servers through the extensions' supervisor, Bash commands through the engine — which is why this
 * lives below both layers.
 *
 * Liveness is read from /proc where it exists, because `kill(-pgid, 0)` also succeeds for zombies,
 * and zombies linger wherever PID 1 does not reap orphans (many containers). Elsewhere the signal
 * probe is the best available answer.
 */
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { isLive, parseProcStat } from "./proc.js";

const POLL_MS = 25;
/** How long to wait for SIGKILL to take effect before giving up on watching. */
const KILL_SETTLE_MS = 1000;

export class ProcessGroup {
  private stopping: Promise<void> | undefined;

  constructor(
    /** The group id: the pid of the group leader started with `detached: true`. */
    readonly pgid: number,
    private readonly graceMs: number,
  ) {}

  /** Whether any process of the group is still running (zombies do not count). */
  async hasLiveMembers(): Promise<boolean> {
    if (!this.signal(0)) return false;
    const members = await liveMembersFromProc(this.pgid);
    return members === undefined || members.length > 0;
  }

  /** Stops every process of the group; resolves once they are gone (or could not be seen to go). */
  stop(): Promise<void> {
    this.stopping ??= this.run();
    return this.stopping;
  }

  private async run(): Promise<void> {
    if (!this.signal("SIGTERM")) return;
    if (await this.waitUntilEmpty(this.graceMs)) return;
    this.signal("SIGKILL");
    await this.waitUntilEmpty(KILL_SETTLE_MS);
  }

  private async waitUntilEmpty(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (!(await this.hasLiveMembers())) return true;
      if (Date.now() >= deadline) return false;
      await sleep(POLL_MS);
    }
  }

  /** Sends `signal` to the group; false when the group no longer exists. */
  private signal(signal: NodeJS.Signals | 0): boolean {
    return signalGroup(this.pgid, signal);
  }
}

/** Pids in process group `pgid` that are not zombies, or `undefined` without a readable /proc. */
export async function liveMembersFromProc(pgid: number): Promise<number[] | undefined> {
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return undefined;
  }
  const members: number[] = [];
  await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => undefined);
        if (stat === undefined) return; // exited meanwhile
        const fields = parseProcStat(stat.trim());
        if (fields !== undefined && fields.pgrp === pgid && isLive(fields)) members.push(Number(name));
      }),
  );
  return members;
}

/**
 * Signals a whole process group. Returns false when the group no longer exists; other failures
 * (EPERM) are thrown, because they mean a process we cannot stop.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  return signalTarget(-pgid, signal);
}

/** Signals one process; false when it no longer exists, other failures thrown. */
export function signalProcess(pid: number, signal: NodeJS.Signals | 0): boolean {
  return signalTarget(pid, signal);
}

function signalTarget(target: number, signal: NodeJS.Signals | 0): boolean {
  // 0, 1 and -1 would address everything we may signal; no caller means that.
  if (!Number.isSafeInteger(target) || Math.abs(target) <= 1)
    throw new RangeError(`not a process or group id: ${target}`);
  try {
    process.kill(target, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}
