/**
 * CPU time per round trip, host and echo child, for the wire benchmark's contenders.
 *
 * The wire rows are wall-clock rates, which on a shared two-core machine swing with the
 * neighbours; the CPU a round trip costs swings far less, so this decides whether a change to the
 * peer helped. Contenders run interleaved, round by round; the host's CPU is process.cpuUsage
 * (this process, all threads), the child's the run time of each of its threads
 * (/proc/<pid>/task/<tid>/schedstat). `--base DIR` adds a second build of the peer (a copy of
 * packages/wire/dist made before a change, with a package.json saying "type": "module") as
 * `base`, on both ends, for A/B runs.
 *
 *   node --import tsx bench/wire/cpu.ts [--base DIR] [size=64KiB text] [concurrency=1] [rounds=7] [round trips=800]
 *   sizes: small, 4KiB, 64KiB, 64KiB text
 */
import { readFileSync } from "node:fs";
import { median } from "../lib.js";
import { childCpuMicros } from "../plugins/cpu.js";
import { bareClient, type Client, nexoClient, vscodeClient } from "./contenders.js";
import { payloads } from "./payloads.js";

interface Cpu {
  host: number;
  child: number;
  /** Round trips per second of wall time in this round (the rate the wire rows report). */
  rate: number;
  /**
   * The echo child's voluntary context switches per round trip (its main thread): how often it
   * found nothing to read and slept. At 16 in flight ≤ 0.03 means both processes stayed busy,
   * 0.04–0.10 that they took turns (docs/performance.md, "JSON-RPC peer").
   */
  sleeps: number;
}

/** A process's voluntary context switches so far (its main thread's, from /proc). */
function voluntarySwitches(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
}

async function cpuPerRoundTrip(c: Client, params: unknown, concurrency: number, calls: number): Promise<Cpu> {
  let started = 0;
  const lane = async () => {
    while (started < calls) {
      started++;
      await c.call(params);
    }
  };
  const child0 = childCpuMicros(c.pid);
  const sleeps0 = voluntarySwitches(c.pid);
  const host0 = process.cpuUsage();
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - start) / 1000;
  const host = process.cpuUsage(host0);
  return {
    host: (host.user + host.system) / calls,
    child: (childCpuMicros(c.pid) - child0) / calls,
    rate: calls / seconds,
    sleeps: (voluntarySwitches(c.pid) - sleeps0) / calls,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let base: string | undefined;
  const at = args.indexOf("--base");
  if (at !== -1) [, base] = args.splice(at, 2);
  const size = (args[0] ?? "64KiB text") as keyof typeof payloads;
  const concurrency = Number(args[1] ?? 1);
  const rounds = Number(args[2] ?? 7);
  const calls = Number(args[3] ?? 800);
  const params = payloads[size];
  if (!params) throw new Error(`unknown size ${size}; one of ${Object.keys(payloads).join(", ")}`);
  const contenders: Record<string, Client> = {
    bare: bareClient(),
    nexo: await nexoClient(),
    vscode: vscodeClient(),
  };
  if (base) contenders.base = await nexoClient(base);
  const seen: Record<string, Cpu[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  try {
    for (const c of Object.values(contenders)) await cpuPerRoundTrip(c, params, concurrency, calls);
    // Every other round runs the contenders in reverse order: a contender's place in the round
    // (after which neighbour, how long after the warm-up) otherwise biases its figure, e.g. an
    // A/A run of one build as `nexo` and `base` read 12.1 against 13.3 µs in the same places.
    const order = Object.entries(contenders);
    for (let r = 0; r < rounds; r++) {
      for (const [who, c] of r % 2 === 0 ? order : [...order].reverse())
        seen[who]!.push(await cpuPerRoundTrip(c, params, concurrency, calls));
    }
  } finally {
    for (const c of Object.values(contenders)) c.close();
  }
  const total = (who: string) => median(seen[who]!.map((s) => s.host + s.child));
  const rate = (who: string) => median(seen[who]!.map((s) => s.rate));
  console.log(
    `${size} c=${concurrency}, ${rounds} interleaved rounds of ${calls}; CPU µs per round trip and round trips/s (medians)`,
  );
  for (const who of Object.keys(seen)) {
    const s = seen[who]!;
    const host = median(s.map((x) => x.host));
    const child = median(s.map((x) => x.child));
    const sleeps = median(s.map((x) => x.sleeps));
    // CPU ratios are the other's CPU over this one's: higher is better, as for the rate ratios.
    const cpu = (other: string) => (total(other) / total(who)).toFixed(2);
    const wall = (other: string) => (rate(who) / rate(other)).toFixed(2);
    const ratios =
      who === "bare"
        ? ""
        : `  CPU vscode/${who} ${cpu("vscode")}, bare/${who} ${cpu("bare")}  rate ${who}/vscode ${wall("vscode")}, ${who}/bare ${wall("bare")}`;
    console.log(
      `  ${who.padEnd(7)} host ${host.toFixed(1)}  child ${child.toFixed(1)}  total ${total(who).toFixed(1)}  ${Math.round(rate(who))} rt/s  child sleeps/rt ${sleeps.toFixed(3)}${ratios}`,
    );
  }
  if (base) {
    // Paired by round: each round's base CPU over its nexo CPU, so the machine's drift between
    // rounds cancels; the median and the spread of the rounds' ratios.
    const paired = (pick: (c: Cpu) => number) => {
      const ratios = seen.base!.map((b, i) => pick(b) / pick(seen.nexo![i]!)).sort((x, y) => x - y);
      return `${median(ratios).toFixed(3)} (${ratios[0]!.toFixed(2)}–${ratios[ratios.length - 1]!.toFixed(2)})`;
    };
    console.log(
      `  paired base/nexo by round: CPU total ${paired((c) => c.host + c.child)}, host ${paired((c) => c.host)}, child ${paired((c) => c.child)}; rate nexo/base ${paired((c) => 1 / c.rate)}`,
    );
  }
}

await main();
