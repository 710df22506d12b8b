/**
 * The file tools on a large tree (10,000 files of ~6 KB in 100 directories, generated once):
 *   grep files   — Grep, output_mode "files", a pattern found in one file in ten
 *   grep content — Grep, output_mode "content", a rare pattern (few lines in all)
 *   bare         — the floor: the same walk and line-by-line regex test written by hand on the
 *                  main thread (readdir + readFile + RegExp.test), no confinement, no limits
 *   read         — Read of one 6 KB file through the registry (reads per second)
 * Grep's matching runs in a worker thread (issue 10.7), and every path is walked through directory
 * descriptors (issue 10.16); this benchmark shows what both cost against the bare loop.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinTools } from "../packages/nexo/src/engine/tools/builtins.js";
import { ToolRegistry } from "../packages/nexo/src/engine/tools/registry.js";
import type { ToolContext } from "../packages/nexo/src/engine/types.js";
import { type BenchContext, interleave, median, round } from "./lib.js";

const DIRS = 100;
const FILES_PER_DIR = 100;

function buildTree(): string {
  const root = mkdtempSync(join(tmpdir(), "nexo-bench-tools-"));
  const filler = "const value = computeSomething(input, options); // an ordinary line of code\n".repeat(80);
  for (let d = 0; d < DIRS; d++) {
    const dir = join(root, `pkg${d}`, "src");
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) {
      const n = d * FILES_PER_DIR + f;
      const marker = n % 10 === 0 ? "export function needleHandler() {}\n" : "";
      const rare = n % 1000 === 0 ? "// RARE_TOKEN here\n" : "";
      writeFileSync(join(dir, `file${f}.ts`), `${filler}${marker}${rare}${filler}`);
    }
  }
  return root;
}

async function bareGrep(root: string, regex: RegExp): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const text = (await readFile(path)).toString("utf8");
        if (text.split("\n").some((line) => regex.test(line))) found.push(path);
      }
    }
  };
  await walk(root);
  return found;
}

export default async function tools(ctx: BenchContext): Promise<void> {
  const root = buildTree();
  const registry = new ToolRegistry();
  registry.registerAll(builtinTools({ grep: { maxResults: 100_000 } }));
  const toolCtx: ToolContext = {
    signal: new AbortController().signal,
    sessionId: "bench",
    agentId: "bench",
    callId: "c",
    workspace: root,
    unconfined: false,
  };

  const timed = async (fn: () => Promise<void>): Promise<number> => {
    const deadline = performance.now() + ctx.seconds * 1000;
    let n = 0;
    const start = performance.now();
    while (performance.now() < deadline || n === 0) {
      await fn();
      n++;
    }
    return (performance.now() - start) / n;
  };
  const grepFiles = async () => {
    const out = await registry.invoke("Grep", { pattern: "function needle\\w+" }, toolCtx);
    if (out.isError || out.metadata?.count !== 1000)
      throw new Error(`grep files: ${out.output.slice(0, 200)}`);
  };
  const grepContent = async () => {
    const out = await registry.invoke("Grep", { pattern: "RARE_TOKEN", output_mode: "content" }, toolCtx);
    if (out.isError || out.metadata?.count !== 10)
      throw new Error(`grep content: ${out.output.slice(0, 200)}`);
  };
  const bare = async () => {
    const found = await bareGrep(root, /function needle\w+/u);
    if (found.length !== 1000) throw new Error(`bare: ${found.length}`);
  };
  let reads = 0;
  const read = async () => {
    const out = await registry.invoke("Read", { file_path: `pkg${reads++ % DIRS}/src/file7.ts` }, toolCtx);
    if (out.isError) throw new Error(out.output);
  };

  await grepFiles(); // warm-up (JIT, the worker)
  await bare();
  const samples = await interleave(ctx.reps, {
    grepFiles: () => timed(grepFiles),
    grepContent: () => timed(grepContent),
    bare: () => timed(bare),
    read: async () => 1000 / (await timed(read)),
  });
  const m = {
    grepFiles: median(samples.grepFiles),
    grepContent: median(samples.grepContent),
    bare: median(samples.bare),
    read: median(samples.read),
  };
  ctx.log(
    `ms per search of ${DIRS * FILES_PER_DIR} files: grep files ${round(m.grepFiles, 1)}  grep content ${round(m.grepContent, 1)}  bare ${round(m.bare, 1)}; reads/s ${Math.round(m.read)}`,
  );
  for (const [key, name] of [
    ["bare", "grep 10k files bare loop"],
    ["grepFiles", "grep 10k files (files mode)"],
    ["grepContent", "grep 10k files (content mode)"],
  ] as const) {
    ctx.record({
      benchmark: "tools",
      name,
      metric: "milliseconds per search",
      value: round(m[key], 1),
      unit: "ms",
      samples: samples[key].map((v) => round(v, 1)),
      ...(key === "bare" ? {} : { ratios: { "time/bare_time": round(m[key] / m.bare) } }),
    });
  }
  ctx.record({
    benchmark: "tools",
    name: "Read 6 KB file",
    metric: "reads per second",
    value: Math.round(m.read),
    unit: "reads/s",
    samples: samples.read.map(Math.round),
  });
}
