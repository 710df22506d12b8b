#!/usr/bin/env node
// Runs every *.test.ts under packages/*/test and examples/ with Node's own test runner.
// Tests load TypeScript sources directly (tsx + the "@nexo/source" export condition), so no
// build is needed for in-process tests; tests that spawn the CLI use the built dist/. The example
// plugins are compiled first (scripts/build-examples.mjs), since every test runs them compiled.
// Usage: node scripts/run-tests.mjs [filter...]   (a filter is a substring of the file path)
//
// Files run several at once (most of them wait on child processes — daemons, plugins, sockets —
// not on the CPU), each in its own Node process, as `node --test` runs them. This script keeps
// the pool itself rather than `node --test --test-concurrency` so that it can:
// - give each file its own TMPDIR, so files running side by side never share a temp path, and
//   find the processes a file left behind (they carry that TMPDIR in their environment);
// - start the slowest files first, so one long file does not start last and stretch the run: by
//   the durations of the last run here (node_modules/.cache/nexo-tests), else of the committed
//   scripts/test-durations.json (a fresh clone; refresh it from the cache now and then);
// - print each file's output whole when it ends, then the slowest files and the failures.
// Environment:
//   NEXO_TEST_CONCURRENCY   files at once (default: 2 per CPU, at least 2, at most 6)
//   NEXO_TEST_FILE_TIMEOUT  seconds before a file is killed and counted failed (default 900)
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { findLeftovers, killLeftovers } from "./test-leftovers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const filters = process.argv.slice(2);
const concurrency = positiveInt(
  process.env.NEXO_TEST_CONCURRENCY,
  Math.min(6, Math.max(2, availableParallelism() * 2)),
);
const fileTimeoutMs = positiveInt(process.env.NEXO_TEST_FILE_TIMEOUT, 900) * 1000;
const durationsPath = join(root, "node_modules/.cache/nexo-tests/durations.json");
const seedDurationsPath = join(root, "scripts/test-durations.json");

function positiveInt(text, fallback) {
  const n = Number.parseInt(text ?? "", 10);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

function readDurations(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return {};
  }
}

const files = ["packages", "examples"]
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) => walk(join(root, dir), []))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((flt) => f.includes(flt)))
  .sort();
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
// The example plugins run compiled, as the daemon runs them: compile them from the current sources.
const examples = spawnSync(process.execPath, [join(root, "scripts/build-examples.mjs")], {
  stdio: "inherit",
});
if (examples.status !== 0) process.exit(examples.status ?? 1);

// Slowest first; a file never timed counts as slow (it may be a new, long one).
const known = { ...readDurations(seedDurationsPath), ...readDurations(durationsPath) };
const queue = [...files].sort(
  (a, b) => (known[b] ?? Infinity) - (known[a] ?? Infinity) || a.localeCompare(b),
);

const COUNTERS = ["tests", "pass", "fail", "cancelled", "skipped", "todo"];
const totals = Object.fromEntries(COUNTERS.map((k) => [k, 0]));
const results = [];
const tmpRoot = mkdtempSync(join(tmpdir(), "nexo-tests-"));
const tsxCache = join(tmpdir(), `tsx-${process.getuid?.() ?? 0}`);
mkdirSync(tsxCache, { recursive: true });
const started = Date.now();
let done = 0;
const running = new Set();

// Interrupted (Ctrl-C, a CI timeout): the files' process groups go too, and the temp root.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    for (const pid of running) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {}
    }
    rmSync(tmpRoot, { recursive: true, force: true });
    process.exit(130);
  });
}

function runFile(file) {
  return new Promise((resolve) => {
    const fileTmp = mkdtempSync(join(tmpRoot, "f-"));
    // tsx keeps its compile cache in TMPDIR/tsx-UID: share the real one, or each file recompiles.
    symlinkSync(tsxCache, join(fileTmp, basename(tsxCache)));
    const t0 = Date.now();
    const child = spawn(
      process.execPath,
      ["--conditions=@nexo/source", "--import", "tsx", "--test-reporter=spec", file],
      {
        cwd: root,
        detached: true, // its own process group, so a timeout kills what it started too
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          NEXO_LOG: process.env.NEXO_LOG ?? "silent",
          TMPDIR: fileTmp,
          FORCE_COLOR: process.env.FORCE_COLOR ?? (process.stdout.isTTY ? "1" : "0"),
        },
      },
    );
    running.add(child.pid);
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, fileTimeoutMs);
    child.on("close", async (code, signal) => {
      running.delete(child.pid);
      clearTimeout(timer);
      const seconds = (Date.now() - t0) / 1000;
      const output = Buffer.concat(chunks).toString("utf8");
      const counts = parseCounts(output);
      const leftovers = await findLeftovers(fileTmp);
      killLeftovers(leftovers);
      rmSync(fileTmp, { recursive: true, force: true });
      const ok = code === 0 && !timedOut && counts !== undefined;
      resolve({ file, seconds, ok, code, signal, timedOut, counts, output, leftovers });
    });
  });
}

// The spec reporter ends with "ℹ tests N", "ℹ pass N", ... (coloured on a terminal).
function parseCounts(output) {
  const plain = stripVTControlCharacters(output);
  const counts = {};
  for (const key of COUNTERS) {
    const m = plain.match(new RegExp(`^\\S* ?${key} (\\d+)$`, "m"));
    if (!m) return undefined;
    counts[key] = Number(m[1]);
  }
  return counts;
}

function report(r) {
  done += 1;
  process.stdout.write(r.output.endsWith("\n") || r.output === "" ? r.output : `${r.output}\n`);
  const verdict = r.ok ? "ok" : r.timedOut ? `TIMED OUT after ${fileTimeoutMs / 1000}s` : "FAILED";
  console.log(`# [${done}/${files.length}] ${verdict} ${r.file} (${r.seconds.toFixed(1)}s)`);
  for (const p of r.leftovers) console.log(`#   left running, now killed: pid ${p.pid} ${p.cmd}`);
  if (r.counts) for (const key of COUNTERS) totals[key] += r.counts[key];
}

async function worker() {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const r = await runFile(file);
    results.push(r);
    report(r);
  }
}

await Promise.all(Array.from({ length: Math.min(concurrency, files.length) }, worker));
rmSync(tmpRoot, { recursive: true, force: true });

const wall = (Date.now() - started) / 1000;
const failed = results.filter((r) => !r.ok);
const leaky = results.filter((r) => r.leftovers.length > 0);
console.log(`\n# ${files.length} files, ${concurrency} at once, ${wall.toFixed(0)}s wall`);
console.log(`# ${COUNTERS.map((k) => `${k} ${totals[k]}`).join(", ")}`);
console.log("# slowest files:");
for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10)) {
  console.log(`#   ${r.seconds.toFixed(1).padStart(6)}s ${r.file}`);
}
for (const r of leaky) console.log(`# left processes behind: ${r.file} (${r.leftovers.length})`);
for (const r of failed) console.log(`# FAILED: ${r.file}${r.timedOut ? " (timed out)" : ""}`);

const timed = Object.fromEntries(results.map((r) => [r.file, Math.round(r.seconds * 10) / 10]));
mkdirSync(dirname(durationsPath), { recursive: true });
writeFileSync(durationsPath, `${JSON.stringify({ ...known, ...timed }, null, 1)}\n`);
process.exit(failed.length > 0 ? 1 : 0);
