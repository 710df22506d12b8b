/**
 * The child ledger: on disk, which children a daemon process has running, so that what a daemon
 * killed with SIGKILL left behind is found and stopped at the next start.
 *
 * A SIGKILLed daemon runs no exit hook. Its sandboxed children die with it (bwrap's
 * --die-with-parent), the others see their stdin close, which every nexo SDK treats as shutdown —
 * but a child that ignores that (seen: 4 of 12 plugin processes, 2 of 5 MCP servers) would run on
 * forever. So each run keeps a directory `<dir>/<run token>/` holding `owner.json` (the owning
 * process's identity: pid, start time, boot id, pid namespace) and one `<pgid>.json` per live
 * child (its leader's pid and start time, its tag). `reapOrphans` (at the next start) looks at
 * every other run: if its owner is provably dead, it SIGKILLs the run's children — the groups of
 * leaders whose pid still has the recorded start time (a reused pid is never signalled), and every
 * process whose environment carries the run's tag (lineage.ts) — with their descendants, and
 * removes the run's directory. A run whose owner lives, or cannot be judged (another host, another
 * pid namespace), is left alone.
 *
 * Files are written to a temporary name and renamed, so a reader never sees half a record.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { currentProcessIdentity, judgeIdentity, type ProcessIdentity } from "./identity.js";
import { type LineageMarks, runToken, signalLineage } from "./lineage.js";
import { readProcStat } from "./proc.js";
import {
  type ChildRecorder,
  liveProcessGroups,
  type ProcessGroupRegistry,
  type RegisteredChild,
} from "./registry.js";

const OWNER_FILE = "owner.json";

/** Where in a state dir the daemon keeps its ledger. */
export const CHILD_LEDGER_DIR = "children";

/**
 * The record schemas, built per reapOrphans call and dropped with it: only the reaping at start
 * reads records back, so a daemon need not keep them for its life. (Writing a record — once per
 * child spawned — validates nothing.)
 */
function recordSchemas() {
  return {
    owner: z.object({
      pid: z.number().int().min(1),
      hostname: z.string(),
      bootId: z.string().nullable(),
      pidNamespace: z.string().nullable(),
      startTicks: z.string().nullable(),
    }),
    child: z.object({
      pgid: z.number().int().min(2),
      label: z.string(),
      tag: z.string().optional(),
      startTicks: z.string().optional(),
    }),
  };
}
type RecordSchemas = ReturnType<typeof recordSchemas>;
type ChildRecord = z.infer<RecordSchemas["child"]>;

/** The subset of pino's API the ledger reports through. */
interface LedgerLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * What a daemon does once it holds its state dir: reap what dead runs in `dir` left behind
 * (logging each), then record its own children there. `close()` it at a clean exit.
 */
export function openChildLedger(
  dir: string,
  logger: LedgerLogger,
  registry: ProcessGroupRegistry = liveProcessGroups,
): ChildLedger {
  const report = reapOrphans(dir);
  for (const run of report.reaped) {
    logger.warn(
      { run: run.run, owner: run.owner, children: run.children, killed: run.killed, reason: run.reason },
      "stopped processes a previous nexo process left running",
    );
  }
  return ChildLedger.open(dir, { registry });
}

export class ChildLedger implements ChildRecorder {
  readonly runDir: string;
  private readonly registry: ProcessGroupRegistry | undefined;

  private constructor(runDir: string, registry: ProcessGroupRegistry | undefined) {
    this.runDir = runDir;
    this.registry = registry;
  }

  /**
   * Starts this process's run in `dir` (created 0700 when missing); with `registry`, every child
   * registered there is recorded from now on.
   */
  static open(
    dir: string,
    options: { owner?: ProcessIdentity; registry?: ProcessGroupRegistry } = {},
  ): ChildLedger {
    const runDir = join(dir, runToken());
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    writeAtomically(join(runDir, OWNER_FILE), options.owner ?? currentProcessIdentity());
    const ledger = new ChildLedger(runDir, options.registry);
    options.registry?.recordIn(ledger);
    return ledger;
  }

  record(child: RegisteredChild): void {
    try {
      writeAtomically(join(this.runDir, `${child.pgid}.json`), child);
    } catch {
      // A full disk must not stop a child from starting; the exit hooks still cover a normal exit.
    }
  }

  forget(pgid: number): void {
    try {
      unlinkSync(join(this.runDir, `${pgid}.json`));
    } catch {
      // Already gone.
    }
  }

  /** Ends the run (at a clean exit): nothing of it is left to reap. */
  close(): void {
    this.registry?.stopRecordingIn(this);
    rmSync(this.runDir, { recursive: true, force: true });
  }
}

export interface ReapedRun {
  run: string;
  owner: number;
  /** Why the owner counts as dead. */
  reason: string;
  /** The children recorded for the run, by label. */
  children: string[];
  /** The processes that were still running and got SIGKILL. */
  killed: number[];
}

export interface ReapReport {
  reaped: ReapedRun[];
  /** Runs left alone, with why (their owner runs, or cannot be judged from here). */
  skipped: Array<{ run: string; reason: string }>;
}

/** Stops what dead owners in `dir` left running (see the file comment). Never throws for a bad entry. */
export function reapOrphans(dir: string, self: ProcessIdentity = currentProcessIdentity()): ReapReport {
  const report: ReapReport = { reaped: [], skipped: [] };
  let runs: string[];
  try {
    runs = readdirSync(dir);
  } catch {
    return report;
  }
  const schemas = recordSchemas();
  for (const run of runs) {
    if (run === runToken() || !/^[0-9a-f]{12}$/.test(run)) continue;
    const runDir = join(dir, run);
    const owner = readJson(join(runDir, OWNER_FILE), schemas.owner);
    if (owner === undefined) {
      // A run being set up this very moment has no owner file yet; it is not ours to judge.
      report.skipped.push({ run, reason: "no readable owner record" });
      continue;
    }
    const verdict = judgeIdentity(owner, self);
    if (verdict.state !== "dead") {
      report.skipped.push({ run, reason: verdict.reason });
      continue;
    }
    const children = readChildren(runDir, schemas.child);
    const marks: LineageMarks[] = [{ run }];
    for (const child of children) {
      // Only a leader that is provably the recorded process lends its group to the search.
      const stat = readProcStat(child.pgid);
      if (child.startTicks !== undefined && stat?.startTicks === child.startTicks)
        marks.push({ pgid: child.pgid });
    }
    const killed = signalLineage(marks, "SIGKILL").pids;
    rmSync(runDir, { recursive: true, force: true });
    report.reaped.push({
      run,
      owner: owner.pid,
      reason: verdict.reason,
      children: children.map((child) => child.label),
      killed,
    });
  }
  return report;
}

function readChildren(runDir: string, schema: RecordSchemas["child"]): ChildRecord[] {
  const children: ChildRecord[] = [];
  for (const name of readdirSync(runDir)) {
    if (!/^\d+\.json$/.test(name)) continue;
    const child = readJson(join(runDir, name), schema);
    if (child !== undefined) children.push(child);
  }
  return children;
}

function readJson<T>(path: string, schema: z.ZodType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function writeAtomically(path: string, value: unknown): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}
