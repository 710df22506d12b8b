/**
 * What every attack of the chaos suite shares: the scale it runs at, how it reports a measured
 * figure, how it records a broken property, and a few probes of the daemon from outside (a
 * /healthz poller, processes left behind). An attack is a script whose `main` gets an `Attack`;
 * `runAttack` prints its figures and a last machine-readable line for the runner, and exits
 * non-zero when a property broke.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { environHas, isLive, processTable } from "../packages/nexo/src/process/proc.js";

/** `short` runs in CI (`npm test`), `long` is `npm run chaos`. */
export type Scale = "short" | "long";

export const RESULT_PREFIX = "chaos-result ";

export interface Figure {
  name: string;
  value: number;
  unit: string;
}

export interface AttackResult {
  attack: string;
  scale: Scale;
  ok: boolean;
  ms: number;
  figures: Figure[];
  broken: string[];
}

export class Attack {
  readonly scale: Scale = process.env.CHAOS_SCALE === "long" ? "long" : "short";
  readonly figures: Figure[] = [];
  readonly broken: string[] = [];
  private readonly cleanups: Array<() => unknown> = [];

  constructor(readonly name: string) {}

  /** `short` or `long` by the scale. */
  pick<T>(short: T, long: T): T {
    return this.scale === "long" ? long : short;
  }

  /** Records and prints a measured figure. */
  figure(name: string, value: number, unit = ""): number {
    const rounded = Number.isInteger(value) ? value : Number(value.toFixed(2));
    this.figures.push({ name, value: rounded, unit });
    console.log(`  ${name}: ${rounded.toLocaleString("en-US")}${unit ? ` ${unit}` : ""}`);
    return value;
  }

  /** Records a broken property unless `holds`; the attack then fails. */
  expect(holds: boolean, property: string): void {
    if (holds) return;
    this.broken.push(property);
    console.log(`  BROKEN: ${property}`);
  }

  note(text: string): void {
    console.log(`  ${text}`);
  }

  /** Runs at the end, newest first, whatever happened. */
  defer(cleanup: () => unknown): void {
    this.cleanups.push(cleanup);
  }

  /** A fresh temporary directory, removed at the end. */
  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), `nexo-chaos-${prefix}-`));
    this.defer(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  async cleanup(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.log(`  (cleanup failed: ${(error as Error).message})`);
      }
    }
  }
}

/** Runs one attack as a script: figures and broken properties printed, exit code 1 if any broke. */
export async function runAttack(name: string, main: (attack: Attack) => Promise<void>): Promise<never> {
  const attack = new Attack(name);
  const started = Date.now();
  console.log(`${name} (${attack.scale})`);
  try {
    await main(attack);
  } catch (error) {
    attack.expect(false, `the attack could not run: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await attack.cleanup();
  }
  const result: AttackResult = {
    attack: name,
    scale: attack.scale,
    ok: attack.broken.length === 0,
    ms: Date.now() - started,
    figures: attack.figures,
    broken: attack.broken,
  };
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
  process.exit(result.ok ? 0 : 1);
}

export interface LatencySummary {
  requests: number;
  failures: number;
  maxMs: number;
  p50Ms: number;
  p99Ms: number;
}

export function summarise(latencies: number[], failures = 0): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { requests: latencies.length, failures, maxMs: sorted.at(-1) ?? 0, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/**
 * Polls `url` back to back (one request at a time, each with a 10 s limit) until stopped; a
 * request that fails or answers anything but 200 counts as a failure.
 */
export function pollHealth(
  url: string,
  headers: Record<string, string> = {},
): {
  stop(): Promise<LatencySummary>;
} {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status !== 200) failures++;
      } catch {
        failures++;
      }
      latencies.push(performance.now() - started);
      await sleep(5);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return summarise(latencies, failures);
    },
  };
}

/** CPU seconds (user + system) `pid` has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  let line: string;
  try {
    line = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return Number.NaN;
  }
  // After "(comm) " come the fields from 3 on; utime and stime are fields 14 and 15.
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Linux's USER_HZ: /proc's CPU times are in these ticks. */
const CLOCK_TICKS = 100;

/** `root` and every descendant's pid, by parent link. */
export function processTree(root: number): number[] {
  const table = processTable() ?? [];
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const stat of table) if (stat.ppid === tree[i] && !tree.includes(stat.pid)) tree.push(stat.pid);
  }
  return tree;
}

/** Live processes whose environment carries `NAME=value` (a marker given to the children). */
export function processesWithEnv(entry: string): number[] {
  return (processTable() ?? [])
    .filter((stat) => isLive(stat) && environHas(stat.pid, [entry]))
    .map((stat) => stat.pid);
}

/** Waits up to `timeoutMs` for no process to carry the marker; returns how many are left. */
export async function leftBehind(entry: string, timeoutMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = processesWithEnv(entry);
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(100);
    left = processesWithEnv(entry);
  }
  return left;
}

/** SIGKILLs whatever still carries the marker (cleanup after a failed attack). */
export function killMarked(entry: string): void {
  for (const pid of processesWithEnv(entry)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}
