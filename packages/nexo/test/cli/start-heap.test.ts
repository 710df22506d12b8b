/**
 * cli/start-heap.ts holds V8's young generation at its size while `nexo start` boots (issue 15, the
 * idle daemon's memory) and lets it grow again once the daemon is ready. Each case runs in a child
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
