/**
 * The benchmark harness' shared vocabulary. A benchmark measures several contenders side by side in
 * one run (ours, a bare baseline, the library a user would pick instead), interleaving their
 * repetitions so that a noisy neighbour hurts them all alike, and reports medians and ratios.
 */
import { fileURLToPath } from "node:url";

/**
 * The `nexo` command as an installed user's `nexo` runs it: bin/nexo, a POSIX sh launcher that
 * `exec`s node (the startup snapshot for `nexo agent`, start-time node flags for `nexo start`; it
 * says how it chooses). Every row that measures nexo starts it this way.
 */
export const NEXO_COMMAND = fileURLToPath(new URL("../packages/nexo/bin/nexo", import.meta.url));

/** The ES module entry, for a run that puts node flags of its own before it, and for nexo's tools the bench uses (the mock). */
export const NEXO_ENTRY = fileURLToPath(new URL("../packages/nexo/bin/nexo.js", import.meta.url));

/**
 * The environment of a `nexo start` the bench launches: a user's basics and info-level logs (the
 * bench follows the ready line and counts warnings), plus the operator's switch of the idle trim
 * (daemon/idle-trim.ts) when the run sets it, so a run can compare it off.
 */
export function nexoStartEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: process.env.LANG,
    NEXO_LOG: "info",
    ...(process.env.NEXO_IDLE_TRIM === undefined ? {} : { NEXO_IDLE_TRIM: process.env.NEXO_IDLE_TRIM }),
  };
}

export interface BenchResult {
  /** The benchmark file, e.g. "wire". */
  benchmark: string;
  /** What was measured, e.g. "roundtrip small c=1 nexo". */
  name: string;
  /** e.g. "round trips per second". */
  metric: string;
  /** The median over repetitions. */
  value: number;
  unit: string;
  /** Every repetition's value, for judging noise. */
  samples: number[];
  /** Named ratios against other contenders, e.g. {"vs_bare": 0.93}. */
  ratios?: Record<string, number>;
  /** A goal from the issue and whether this run met it. */
  goal?: { ratio: string; min?: number; max?: number; met: boolean };
}

export interface BenchContext {
  /** Repetitions per contender (BENCH_REPS, default 5). */
  reps: number;
  /** Seconds per repetition (BENCH_SECONDS, default 1). */
  seconds: number;
  record(result: BenchResult): void;
  log(line: string): void;
}

export type Benchmark = (ctx: BenchContext) => Promise<void>;

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/**
 * Runs each contender `reps` times, interleaved (a b c a b c …), and returns every contender's
 * samples in order.
 */
export async function interleave<K extends string>(
  reps: number,
  contenders: Record<K, () => Promise<number>>,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(contenders) as K[];
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < reps; r++) {
    for (const k of keys) samples[k].push(await contenders[k]());
  }
  return samples;
}

/** What `alternateCalls` measured: per round, a's time per call over b's, and each one's mean. */
export interface AlternatedRounds {
  /** Each round's a/b ratio of time per call. */
  ratios: number[];
  /** Each round's mean milliseconds per call of a, and of b. */
  aMs: number[];
  bMs: number[];
}

/**
 * Times two contenders one call at a time, alternating who goes first (a b, b a, a b …), for
 * `rounds` rounds of about `roundMs` each; every round holds as many calls of a as of b. Why:
 * rounds of one contender at a time, a second each, see the machine as it was during that second,
 * and on a shared machine the load moves between seconds; calls taken turn about see the same
 * load, so the per-round ratio keeps the contenders' difference and loses most of the neighbours'.
 * The median of the per-round ratios estimates a/b (time per call) with less spread from run to
 * run (docs/performance.md, "Engine overhead per turn", shows both estimators on the same runs).
 */
export async function alternateCalls(
  rounds: number,
  roundMs: number,
  a: () => Promise<void>,
  b: () => Promise<void>,
): Promise<AlternatedRounds> {
  const out: AlternatedRounds = { ratios: [], aMs: [], bMs: [] };
  for (let r = 0; r < rounds; r++) {
    const deadline = performance.now() + roundMs;
    let aTime = 0;
    let bTime = 0;
    let pairs = 0;
    while (pairs === 0 || performance.now() < deadline) {
      const aFirst = pairs % 2 === 0;
      const t0 = performance.now();
      await (aFirst ? a() : b());
      const t1 = performance.now();
      await (aFirst ? b() : a());
      const t2 = performance.now();
      aTime += aFirst ? t1 - t0 : t2 - t1;
      bTime += aFirst ? t2 - t1 : t1 - t0;
      pairs++;
    }
    out.ratios.push(aTime / bTime);
    out.aMs.push(aTime / pairs);
    out.bMs.push(bTime / pairs);
  }
  return out;
}
