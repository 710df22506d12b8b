/**
 * `npm run bench`: runs every bench/*.bench.ts (or those whose name contains an argument), prints a
 * table and writes bench/results/latest.json. A filtered run replaces only the results of the
 * benchmarks it ran and keeps the others' from the file, so one benchmark can be re-measured
 * without losing the rest (each result keeps its own `measuredAt`).
 *   BENCH_REPS=5 BENCH_SECONDS=1 npm run bench -- wire
 * `--peers` adds bench/peers/peers.bench.ts, which installs Claude Code and Codex from npm into a
 * cache directory and measures nexo beside them, and bench/peers/openclaw.bench.ts, which does the
 * same for OpenClaw's gateway beside nexo's daemon; without the flag they never run (they download
 * hundreds of MB) and their rows are kept from the file even by an unfiltered run.
 *   BENCH_REPS=3 npm run bench -- --peers peers     (both)
 *   BENCH_REPS=3 npm run bench -- --peers openclaw  (OpenClaw only)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Benchmark, type BenchResult, round } from "./lib.js";
import { writeReadmeTable } from "./readme-table.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const args = process.argv.slice(2);
const withPeers = args.includes("--peers");
const filters = args.filter((a) => a !== "--peers");
/** Benchmarks that run only when asked for by a flag (they download or take long). */
const OPT_IN = new Set(["peers", "openclaw"]);
const files = [
  ...readdirSync(here).filter((f) => f.endsWith(".bench.ts")),
  ...(withPeers ? ["peers/peers.bench.ts", "peers/openclaw.bench.ts"] : []),
]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

const results: BenchResult[] = [];
const ctx = {
  reps: Number(process.env.BENCH_REPS ?? 5),
  seconds: Number(process.env.BENCH_SECONDS ?? 1),
  record: (r: BenchResult) => results.push(r),
  log: (line: string) => process.stderr.write(`${line}\n`),
};

// Benchmarks take minutes: each says where the run is and how long the previous one took.
const runStarted = Date.now();
// Figures swing with the machine's load: every result records it beside its figures.
const loadAtStart = round(loadavg()[0]!, 1);
const elapsed = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
for (const [index, file] of files.entries()) {
  const name = basename(file, ".bench.ts");
  ctx.log(`\n== [${index + 1}/${files.length}] ${name} (run time so far ${elapsed(runStarted)})`);
  const started = Date.now();
  const before = results.length;
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: Benchmark };
  await mod.default(ctx);
  ctx.log(`-- ${name}: ${results.length - before} results in ${elapsed(started)}`);
}

const table = results.map((r) => ({
  benchmark: r.benchmark,
  name: r.name,
  median: `${r.value} ${r.unit}`,
  ratios: r.ratios
    ? Object.entries(r.ratios)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")
    : "",
  goal: r.goal
    ? `${r.goal.ratio}${r.goal.min !== undefined ? ` >= ${r.goal.min}` : ""}${r.goal.max !== undefined ? ` <= ${r.goal.max}` : ""}: ${r.goal.met ? "met" : "MISSED"}`
    : "",
}));
console.table(table);

mkdirSync(join(here, "results"), { recursive: true });
const latestPath = join(here, "results", "latest.json");
const measuredAt = new Date().toISOString();
const ran = new Set(files.map((file) => basename(file, ".bench.ts")));
const loadAverage = { start: loadAtStart, end: round(loadavg()[0]!, 1) };
const fresh = results.map((r) => ({ ...r, measuredAt, loadAverage }));
/** Results of the benchmarks this run did not include, kept from the file as they were. */
function keptResults(): Array<BenchResult & { measuredAt?: string }> {
  if (!existsSync(latestPath)) return [];
  const previous = JSON.parse(readFileSync(latestPath, "utf8")) as {
    generatedAt?: string;
    results?: Array<BenchResult & { measuredAt?: string }>;
  };
  return (
    (previous.results ?? [])
      // An unfiltered run drops rows of benchmarks that no longer exist, except the opt-in ones'.
      .filter((r) => !ran.has(r.benchmark) && (filters.length > 0 || OPT_IN.has(r.benchmark)))
      .map((r) => ({ ...r, measuredAt: r.measuredAt ?? previous.generatedAt ?? "unknown" }))
  );
}
const kept = keptResults();
const out = {
  generatedAt: measuredAt,
  node: process.version,
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? "unknown", memoryBytes: totalmem() },
  settings: { reps: ctx.reps, seconds: ctx.seconds },
  results: [...kept, ...fresh].sort((a, b) => a.benchmark.localeCompare(b.benchmark)),
};
writeFileSync(latestPath, `${JSON.stringify(out, null, 2)}\n`);
// The README's performance table is generated from the file just written, so it never drifts.
if (writeReadmeTable(out)) console.log("rewrote README.md's performance table");
console.log(
  `wrote bench/results/latest.json (${fresh.length} results measured now${kept.length > 0 ? `, ${kept.length} kept from earlier runs` : ""})`,
);
