/**
 * The children this process has running, so that none outlives it.
 *
 * Whoever starts a child that leads its own process group — the supervisor (plugins, microapps,
 * MCP servers), the Bash tool — registers it here while it may have live processes, with the tag
 * its lineage carries (lineage.ts). `killAll` stops every registered child with its whole lineage,
 * synchronously: the exit hooks (extensions/reaper.ts) call it on the way out. With a ledger
 * attached (`recordIn`), every registration is also written to disk, so that a daemon killed with
 * SIGKILL — when no hook runs — leaves the next start enough to find its children (ledger.ts).
 */
import { type LineageMarks, signalLineage } from "./lineage.js";
import { readProcStat } from "./proc.js";

/** One child as the registry holds it (and a ledger records it). */
export interface RegisteredChild {
  /** The group id (= the leader's pid). */
  pgid: number;
  /** Names the owner in diagnostics, e.g. `plugin:slack`. */
  label: string;
  /** The NEXO_PROCESS_TAG value the child was started with, when it got one. */
  tag?: string;
  /** The leader's start time (clock ticks since boot), so a reused pid is never taken for it. */
  startTicks?: string;
}

/** Where registrations are also written (the on-disk child ledger). */
export interface ChildRecorder {
  record(child: RegisteredChild): void;
  forget(pgid: number): void;
}

export class ProcessGroupRegistry {
  private readonly groups = new Map<number, RegisteredChild>();
  private readonly recorders = new Set<ChildRecorder>();

  /** Registers a child that leads group `pgid`; `label` names its owner (e.g. the plugin id). */
  add(pgid: number, label: string, options: { tag?: string } = {}): void {
    if (!Number.isInteger(pgid) || pgid <= 1) throw new RangeError(`not a process group id: ${pgid}`);
    const startTicks = readProcStat(pgid)?.startTicks;
    const child: RegisteredChild = {
      pgid,
      label,
      ...(options.tag === undefined ? {} : { tag: options.tag }),
      ...(startTicks === undefined ? {} : { startTicks }),
    };
    this.groups.set(pgid, child);
    for (const recorder of this.recorders) recorder.record(child);
  }

  delete(pgid: number): void {
    if (this.groups.delete(pgid)) for (const recorder of this.recorders) recorder.forget(pgid);
  }

  has(pgid: number): boolean {
    return this.groups.has(pgid);
  }

  get size(): number {
    return this.groups.size;
  }

  entries(): Array<{ pgid: number; label: string }> {
    return [...this.groups.values()].map(({ pgid, label }) => ({ pgid, label }));
  }

  /** How to find a registered child's processes (its group, its tag). */
  marks(pgid: number): LineageMarks | undefined {
    const child = this.groups.get(pgid);
    return child === undefined ? undefined : marksOf(child);
  }

  /**
   * Writes every registration to `recorder` from now on (and the current ones at once), until
   * `stopRecordingIn`. The daemon attaches its state dir's ledger once it holds the state lock.
   */
  recordIn(recorder: ChildRecorder): void {
    this.recorders.add(recorder);
    for (const child of this.groups.values()) recorder.record(child);
  }

  stopRecordingIn(recorder: ChildRecorder): void {
    this.recorders.delete(recorder);
  }

  /**
   * Sends `signal` to every registered child's group and lineage and forgets them. Synchronous, so
   * it is safe inside an `exit` listener. Returns how many groups and processes were signalled.
   */
  killAll(signal: NodeJS.Signals = "SIGKILL"): number {
    const children = [...this.groups.values()];
    this.groups.clear();
    try {
      const { groups, pids } = signalLineage(children.map(marksOf), signal);
      return groups + pids.length;
    } finally {
      for (const child of children) for (const recorder of this.recorders) recorder.forget(child.pgid);
    }
  }
}

function marksOf(child: RegisteredChild): LineageMarks {
  return { pgid: child.pgid, ...(child.tag === undefined ? {} : { tag: child.tag }) };
}

/** The registry children are registered in unless their owner is given another. */
export const liveProcessGroups = new ProcessGroupRegistry();
