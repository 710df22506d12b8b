/**
 * One call in flight with the host and the serving child pinned to one CPU, to two CPUs, or left
 * to the scheduler, for the three contenders of the plugin benchmark, interleaved.
 *
 * At one call in flight each message wakes the other process. Whether that process waits on the
 * same CPU or is woken on the other one (an idle virtual CPU on this machine) changes the round
 * trip more than anything in either process's code does, and the scheduler decides it; this tool
 * takes the decision away, so the rate of each placement can be read on its own
 * (docs/performance.md, plugin tool.invoke, "where the round trip goes").
 *
 *   node --import tsx bench/plugins/placement.ts [rounds=5] [calls per round=3000]
 *
 * Needs two CPUs and util-linux's `taskset`. Prints, per contender and placement, the medians of
 * the wall-clock time per round trip, the host's and the child's CPU per call and the migrations
 * per call, then the rate ratios paired by round.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { median } from "../lib.js";
import { type Contender, floorContender, mcpContender, nexoContender } from "./contenders.js";
import { type CpuPerCall, cpuPerCall } from "./cpu.js";

/** Where the host (first) and the child (second) may run. */
const PLACEMENTS = {
  "one CPU": ["0", "0"],
  "two CPUs": ["0", "1"],
  free: ["0-1", "0-1"],
} as const;
type Placement = keyof typeof PLACEMENTS;

/** Pins every thread of `pid` (V8's and libuv's too) to `cpus`. */
function pin(pid: number, cpus: string): void {
  execFileSync("taskset", ["--all-tasks", "--pid", "--cpu-list", cpus, String(pid)], { stdio: "ignore" });
}

/** How often the kernel has moved the process's main thread to another CPU so far. */
function migrations(pid: number): number {
  const found = /^se\.nr_migrations\s*:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/sched`, "utf8"));
  if (!found) throw new Error(`/proc/${pid}/sched has no se.nr_migrations line`);
  return Number(found[1]);
}

interface Sample extends CpuPerCall {
  migrations: number;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const calls = Number(process.argv[3] ?? 3000);
  if (availableParallelism() < 2) throw new Error("placement needs two CPUs: this machine has one");
  const contenders: Record<string, Contender> = {
    nexo: await nexoContender(),
    mcp: await mcpContender(),
    floor: await floorContender(),
  };
  const args = { text: "hello", n: 1 };
  const seen = new Map<string, Sample[]>();
  const key = (who: string, where: Placement) => `${who} ${where}`;
  try {
    // The JIT settles in the first ~6,000 calls (bench/plugins/cpu.ts); none of that is measured.
    for (const c of Object.values(contenders)) await cpuPerCall(c, args, 1, 8000);
    const names = Object.keys(contenders);
    for (let r = 0; r < rounds; r++) {
      for (const where of Object.keys(PLACEMENTS) as Placement[]) {
        const [hostCpus, childCpus] = PLACEMENTS[where];
        // Each round starts with another contender: none always runs right after the same one.
        for (const who of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
          const contender = contenders[who]!;
          const pid = contender.pid!;
          pin(process.pid, hostCpus);
          pin(pid, childCpus);
          const moved = migrations(process.pid) + migrations(pid);
          const sample = await cpuPerCall(contender, args, 1, calls);
          const list = seen.get(key(who, where)) ?? [];
          list.push({ ...sample, migrations: (migrations(process.pid) + migrations(pid) - moved) / calls });
          seen.set(key(who, where), list);
        }
      }
    }
  } finally {
    pin(process.pid, "0-1");
    await Promise.all(Object.values(contenders).map((c) => c.close()));
  }
  const of = (who: string, where: Placement) => seen.get(key(who, where))!;
  for (const where of Object.keys(PLACEMENTS) as Placement[]) {
    for (const who of Object.keys(contenders)) {
      const samples = of(who, where);
      const m = (pick: (s: Sample) => number) => median(samples.map(pick));
      console.log(
        `${where.padEnd(8)} ${who.padEnd(5)} wall ${m((s) => s.wall).toFixed(1)} µs a round trip, CPU host ${m((s) => s.host).toFixed(1)} + child ${m((s) => s.child).toFixed(1)} µs, migrations ${m((s) => s.migrations).toFixed(3)} a call (medians of ${rounds} rounds of ${calls})`,
      );
    }
    // Rates paired by round: the wall time of the slower contender over the faster one's.
    const rate = (a: string, b: string) =>
      median(of(b, where).map((s, i) => s.wall / of(a, where)[i]!.wall)).toFixed(2);
    console.log(
      `${where.padEnd(8)} rates, paired: nexo/mcp ${rate("nexo", "mcp")}, floor/mcp ${rate("floor", "mcp")} (the ceiling), nexo/floor ${rate("nexo", "floor")}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
