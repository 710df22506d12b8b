/**
 * cli/start-heap.ts holds V8's young generation at its size while `nexo start` boots (issue 15, the
 * idle daemon's memory) and lets it grow again once the daemon is ready; it holds back baseline
 * (Sparkplug) code the same way. Each case runs in a child
 * node (a V8 flag is process-wide) that keeps allocating objects which survive, the pattern of a
 * boot that makes V8 grow the young generation, and reports the new space's size.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";

const MODULE = new URL("../../dist/cli/start-heap.js", import.meta.url).href;
const MiB = 1024 * 1024;

const CHILD = `
import { getHeapSpaceStatistics } from "node:v8";
const { holdYoungGeneration } = await import(${JSON.stringify(MODULE)});
const young = () => getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size;
const kept = [];
const allocate = () => { for (let i = 0; i < 300_000; i++) kept.push({ i, text: "v" + i }); };
const [mode, nodeOptions] = JSON.parse(process.argv[1]);
const sizes = { initial: young() };
const release = mode === "hold" ? holdYoungGeneration(process.execArgv, nodeOptions) : () => {};
allocate();
sizes.during = young();
release();
release();
allocate();
sizes.after = young();
process.stdout.write(JSON.stringify(sizes));
`;

async function run(
  mode: "hold" | "none",
  nodeArgs: string[] = [],
  nodeOptions?: string,
): Promise<{ initial: number; during: number; after: number }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...nodeArgs, "--input-type=module", "-e", CHILD, JSON.stringify([mode, nodeOptions])],
    { timeout: 120_000 },
  );
  return JSON.parse(stdout);
}

test("without the hold, surviving allocations grow the young generation (the case it is for)", async () => {
  const sizes = await run("none");
  assert.ok(sizes.during >= 8 * MiB, `young generation ${sizes.during} bytes`);
});

test("held, the young generation stays small; released, it grows again", async () => {
  const sizes = await run("hold");
  assert.ok(sizes.during <= 2 * sizes.initial, `held: ${sizes.during} bytes from ${sizes.initial}`);
  assert.ok(sizes.after >= 8 * MiB, `released: ${sizes.after} bytes`);
});

test("a semi-space setting of the operator's, on node's command line or in NODE_OPTIONS, is kept", async () => {
  const flag = await run("hold", ["--max-semi-space-size=8"]);
  assert.ok(flag.during >= 8 * MiB, `held despite the flag: ${flag.during} bytes`);
  const options = await run("hold", [], "--semi-space-growth-factor=4");
  assert.ok(options.during >= 8 * MiB, `held despite NODE_OPTIONS: ${options.during} bytes`);
});

// A function that ran often enough has baseline code: bit 15 of V8's optimization status. Batch
// compilation is off so that the tier-up happens at a fixed point rather than with a batch.
const BASELINE_CHILD = `
const { holdBaselineCompilation } = await import(${JSON.stringify(MODULE)});
const baseline = (f) => (%GetOptimizationStatus(f) & (1 << 15)) !== 0;
const warm = () => { const f = new Function("a", "return a * 2 + 1;"); for (let i = 0; i < 3000; i++) f(i); return f; };
const args = JSON.parse(process.argv[1]);
const release = args.length > 0 ? holdBaselineCompilation(args) : () => {};
const during = warm();
release();
release();
const after = warm();
process.stdout.write(JSON.stringify({ during: baseline(during), after: baseline(after) }));
`;

async function baselineRun(
  execArgv: string[],
  nodeArgs: string[] = [],
): Promise<{ during: boolean; after: boolean }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--allow-natives-syntax",
      "--no-baseline-batch-compilation",
      ...nodeArgs,
      "--input-type=module",
      "-e",
      BASELINE_CHILD,
      JSON.stringify(execArgv),
    ],
    { timeout: 120_000 },
  );
  return JSON.parse(stdout);
}

test("held, a warm function gets no baseline code; released, the next one does", async () => {
  assert.deepEqual(
    await baselineRun([]),
    { during: true, after: true },
    "without the hold (the case it is for)",
  );
  assert.deepEqual(await baselineRun(["--allow-natives-syntax"]), { during: false, after: true });
});

test("a baseline compiler setting of the operator's is kept", async () => {
  assert.deepEqual(await baselineRun(["--sparkplug"], ["--sparkplug"]), { during: true, after: true });
  assert.deepEqual(await baselineRun(["--no-sparkplug"], ["--no-sparkplug"]), {
    during: false,
    after: false,
  });
});
