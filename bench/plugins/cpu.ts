/**
 * CPU time per tool call, host and child, for the three contenders of the plugin benchmark.
 *
 * Wall-clock rates on a shared two-core machine swing threefold between runs; the CPU a call
 * costs does not, so this is what decides whether a change to the path helped. Interleaved
 * rounds; the host's CPU from process.cpuUsage (this process, all threads), the child's from the
 * nanosecond run time of each of its threads (/proc/<pid>/task/<tid>/schedstat).
 *
 *   node --import tsx bench/plugins/cpu.ts [concurrency=16] [rounds=5] [calls per round=4000]
 */
import { readdirSync, readFileSync } from "node:fs";
import { median } from "../lib.js";
import { type Contender, floorContender, mcpContender, nexoContender } from "./contenders.js";

/** Run time of every thread of `pid` so far, in microseconds. */
export function childCpuMicros(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended between the listing and the read: its time is gone with it
    }
  }
  return ns / 1000;
}

export interface CpuPerCall {
  host: number;
  child: number;
  /** Wall-clock microseconds per call. At one call in flight, wall minus host + child is the time
   * neither process ran: the wake-ups (docs/performance.md, plugin tool.invoke). */
  wall: number;
}

/** `calls` calls with `concurrency` in flight; CPU microseconds per call on each side. */
export async function cpuPerCall(
  contender: Contender,
  args: Record<string, unknown>,
  concurrency: number,
  calls: number,
): Promise<CpuPerCall> {
  const pid = contender.pid;
  if (pid === undefined) throw new Error("this contender does not say which process serves it");
  let started = 0;
  const lane = async () => {
    while (started < calls) {
      started++;
      await contender.call(args);
    }
  };
  const child0 = childCpuMicros(pid);
  const host0 = process.cpuUsage();
  const wall0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const wall = (performance.now() - wall0) * 1000;
  const host = process.cpuUsage(host0);
  const child = childCpuMicros(pid) - child0;
  return { host: (host.user + host.system) / calls, child: child / calls, wall: wall / calls };
}

async function main(): Promise<void> {
  const concurrency = Number(process.argv[2] ?? 16);
  const rounds = Number(process.argv[3] ?? 5);
  const calls = Number(process.argv[4] ?? 4000);
  const contenders: Record<string, Contender> = {
    nexo: await nexoContender(),
    mcp: await mcpContender(),
    floor: await floorContender(),
  };
  const args = { text: "hello", n: 1 };
  const seen: Record<string, CpuPerCall[]> = { nexo: [], mcp: [], floor: [] };
  try {
    // Warm-up: V8 keeps compiling the nexo and MCP paths for the first ~6,000 calls (block-by-block
    // CPU in docs/performance.md); fewer counted the compiler threads into the first round.
    for (const c of Object.values(contenders)) await cpuPerCall(c, args, concurrency, Math.max(calls, 8000));
    const names = Object.keys(contenders);
    for (let r = 0; r < rounds; r++) {
      // Each round starts with another contender: none always runs right after the same one.
      for (const who of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
        seen[who]!.push(await cpuPerCall(contenders[who]!, args, concurrency, calls));
      }
    }
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.close()));
  }
  for (const [who, samples] of Object.entries(seen)) {
    const host = median(samples.map((s) => s.host));
    const child = median(samples.map((s) => s.child));
    const total = median(samples.map((s) => s.host + s.child));
    const wall = median(samples.map((s) => s.wall));
    console.log(
      `${who.padEnd(5)} c=${concurrency}: host ${host.toFixed(1)} µs + child ${child.toFixed(1)} µs = ${total.toFixed(1)} µs per call, wall ${wall.toFixed(1)} µs (median of ${rounds} rounds of ${calls})`,
    );
  }
  // Paired by round (the same minute of the machine), the medians of the ratios.
  const paired = (a: string, b: string, of: (s: CpuPerCall) => number) =>
    median(seen[a]!.map((s, i) => of(s) / of(seen[b]![i]!))).toFixed(2);
  const cpu = (s: CpuPerCall) => s.host + s.child;
  const wall = (s: CpuPerCall) => s.wall;
  console.log(
    `paired: CPU mcp/nexo ${paired("mcp", "nexo", cpu)}, mcp/floor ${paired("mcp", "floor", cpu)}, nexo/floor ${paired("nexo", "floor", cpu)}; wall per call mcp/nexo ${paired("mcp", "nexo", wall)} (nexo's rate over MCP's), mcp/floor ${paired("mcp", "floor", wall)} (the floor's over MCP's: the ceiling at one in flight), nexo/floor ${paired("nexo", "floor", wall)}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
