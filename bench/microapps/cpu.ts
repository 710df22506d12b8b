/**
 * CPU time per tool call, host and child, microapp `tools/call` beside plugin `tool.invoke`, and
 * optionally the same two from another tree (a built copy of the repository at the commit to
 * compare with), all interleaved round by round and paired. This is what decides a change to
 * either path: wall-clock rates on the shared two-core machine swing with the neighbours, the CPU
 * a call costs far less (bench/plugins/cpu.ts measures it the same way).
 *
 *   node --import tsx bench/microapps/cpu.ts [other tree] [concurrency=1] [rounds=9] [calls=3000]
 *
 * The host's CPU is this process's (`process.cpuUsage`), the child's the run time of its threads
 * (`/proc/<pid>/task/<tid>/schedstat`). Each contender is warmed up with 8,000 calls first (V8
 * keeps compiling both paths for the first few thousand).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { median } from "../lib.js";
import type { Contender } from "../plugins/contenders.js";
import { type CpuPerCall, cpuPerCall } from "../plugins/cpu.js";
import { childPids } from "./process-cpu.js";

interface TreeContenders {
  microapp: Contender;
  plugin: Contender;
}

/** A contender with the pid of the child it started (older trees' contenders do not say it). */
async function withPid(make: () => Promise<Contender>): Promise<Contender> {
  const before = childPids();
  const contender = await make();
  if (contender.pid !== undefined) return contender;
  const started = [...childPids()].filter((pid) => !before.has(pid));
  if (started.length !== 1) throw new Error(`expected one new child process, found ${started.length}`);
  return { call: (args) => contender.call(args), close: () => contender.close(), pid: started[0] };
}

async function contendersOf(tree: string): Promise<TreeContenders> {
  const load = (path: string) => import(pathToFileURL(join(tree, path)).href);
  const microapps = (await load("bench/microapps/contenders.ts")) as {
    microappContender(): Promise<Contender>;
  };
  const plugins = (await load("bench/plugins/contenders.ts")) as { nexoContender(): Promise<Contender> };
  return {
    microapp: await withPid(() => microapps.microappContender()),
    plugin: await withPid(() => plugins.nexoContender()),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const other = argv[0] !== undefined && Number.isNaN(Number(argv[0])) ? argv.shift() : undefined;
  if (other !== undefined && !existsSync(join(other, "bench/microapps/contenders.ts")))
    throw new Error(`${other} is not a tree of this repository`);
  const concurrency = Number(argv[0] ?? 1);
  const rounds = Number(argv[1] ?? 9);
  const calls = Number(argv[2] ?? 3000);
  const contenders: Record<string, Contender> = {};
  try {
    const here = await contendersOf(resolve(import.meta.dirname, "../.."));
    contenders.microapp = here.microapp;
    contenders.plugin = here.plugin;
    if (other !== undefined) {
      const there = await contendersOf(resolve(other));
      contenders["old microapp"] = there.microapp;
      contenders["old plugin"] = there.plugin;
    }
    const args = { text: "hello", n: 1 };
    for (const c of Object.values(contenders)) await cpuPerCall(c, args, concurrency, Math.max(calls, 8000));
    const names = Object.keys(contenders);
    const seen: Record<string, CpuPerCall[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < rounds; r++) {
      // Each round starts with another contender: none always runs right after the same one.
      for (const who of [...names.slice(r % names.length), ...names.slice(0, r % names.length)])
        seen[who]!.push(await cpuPerCall(contenders[who]!, args, concurrency, calls));
    }
    const f = (n: number) => n.toFixed(2);
    for (const [who, samples] of Object.entries(seen)) {
      const m = (of: (s: CpuPerCall) => number) => f(median(samples.map(of)));
      console.log(
        `${who.padEnd(12)} c=${concurrency}: host ${m((s) => s.host)} + child ${m((s) => s.child)} = ${m((s) => s.host + s.child)} µs CPU per call, wall ${m((s) => s.wall)} µs (median of ${rounds} rounds of ${calls})`,
      );
    }
    const paired = (a: string, b: string, of: (s: CpuPerCall) => number) => {
      const ratios = seen[a]!.map((s, i) => of(s) / of(seen[b]![i]!));
      return `${f(median(ratios))} [${f(Math.min(...ratios))}–${f(Math.max(...ratios))}]`;
    };
    const line = (a: string, b: string) =>
      `${a}/${b}: CPU host ${paired(a, b, (s) => s.host)}, child ${paired(a, b, (s) => s.child)}, both ${paired(a, b, (s) => s.host + s.child)}; wall ${paired(a, b, (s) => s.wall)}`;
    console.log(`paired by round, median [range]:\n  ${line("microapp", "plugin")}`);
    if (other !== undefined) {
      console.log(`  ${line("old microapp", "old plugin")}`);
      console.log(`  ${line("microapp", "old microapp")}`);
      console.log(`  ${line("plugin", "old plugin")}`);
    }
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.close()));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
