/**
 * Stopping a whole process group: SIGTERM, a grace period for cleanup, then SIGKILL.
 *
 * Liveness is read from /proc where it exists, because `kill(-pgid, 0)` also succeeds for zombies,
 * and zombies linger wherever PID 1 does not reap orphans (many containers). Elsewhere the signal
 * probe is the best available answer.
 */
import { readdir, readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

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
    try {
      process.kill(-this.pgid, signal);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
      throw error;
    }
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
        const fields = parseProcStat(stat);
        if (fields !== undefined && fields.pgrp === pgid && fields.state !== "Z" && fields.state !== "X") {
          members.push(Number(name));
        }
      }),
  );
  return members;
}

/** State and process group from a /proc/<pid>/stat line; the command name may contain spaces and parentheses. */
export function parseProcStat(line: string): { state: string; pgrp: number } | undefined {
  const afterName = line.slice(line.lastIndexOf(")") + 2).split(" ");
  // After "(comm) ": state, ppid, pgrp, ...
  const state = afterName[0];
  const pgrp = Number(afterName[2]);
  if (state === undefined || !Number.isInteger(pgrp)) return undefined;
  return { state, pgrp };
}
