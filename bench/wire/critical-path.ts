/**
 * The critical path of one call in flight, per side, for the wire benchmark's contenders: from a
 * message's bytes reaching JavaScript to the process's next write, in the host (reply in → next
 * request out) and in the echo child (request in → reply out), contenders interleaved round by
 * round (every other round in reverse order), medians. bench/plugins/critical-path-hook.mjs
 * measures: this process imports it, and the echo children load it through NODE_OPTIONS.
 *
 * At one call in flight on two CPUs each side waits for the other only for this part of its
 * work; the rest of a round trip is the two wake-ups (docs/performance.md, "JSON-RPC peer").
 * `--base DIR` adds another build of the peer as `base`, as in bench/wire/cpu.ts.
 *
 *   node --import tsx bench/wire/critical-path.ts [--base DIR] [size=4KiB] [rounds=7] [round trips=3000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "../lib.js";
import { takeSpans } from "../plugins/critical-path-hook.mjs";
import { childSpans } from "../plugins/hooked-child.js";
import { bareClient, type Client, nexoClient, vscodeClient } from "./contenders.js";
import { payloads } from "./payloads.js";

/** Wall-clock µs a round trip over `calls` round trips, one in flight. */
async function run(c: Client, params: unknown, calls: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i++) await c.call(params);
  return ((performance.now() - start) * 1000) / calls;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  let base: string | undefined;
  const at = args.indexOf("--base");
  if (at !== -1) [, base] = args.splice(at, 2);
  const size = (args[0] ?? "4KiB") as keyof typeof payloads;
  const rounds = Number(args[1] ?? 7);
  const calls = Number(args[2] ?? 3000);
  const params = payloads[size];
  if (!params) throw new Error(`unknown size ${size}; one of ${Object.keys(payloads).join(", ")}`);
  const dir = mkdtempSync(join(tmpdir(), "nexo-wire-critical-path-"));
  const hook = `${new URL("../plugins/critical-path-hook.mjs", import.meta.url).href}?dir=${encodeURIComponent(dir)}`;
  // The echo children inherit this process's environment (contenders.ts spawns them with it).
  const nodeOptions = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${nodeOptions ?? ""} --import=${hook}`.trim();
  const contenders: Record<string, Client> = {};
  try {
    contenders.bare = bareClient();
    contenders.nexo = await nexoClient();
    contenders.vscode = vscodeClient();
    if (base) contenders.base = await nexoClient(base);
  } finally {
    if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = nodeOptions;
  }
  const seen: Record<string, { host: number[]; child: number[]; wall: number[] }> = {};
  try {
    for (const c of Object.values(contenders)) await run(c, params, calls);
    const order = Object.keys(contenders);
    for (let r = 0; r < rounds; r++) {
      for (const who of r % 2 === 0 ? order : [...order].reverse()) {
        const c = contenders[who]!;
        await childSpans(dir, c.pid);
        takeSpans();
        const wall = await run(c, params, calls);
        const host = median(takeSpans());
        const child = median(await childSpans(dir, c.pid));
        const s = seen[who] ?? { host: [], child: [], wall: [] };
        seen[who] = s;
        s.host.push(host);
        s.child.push(child);
        s.wall.push(wall);
      }
    }
  } finally {
    for (const c of Object.values(contenders)) c.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`${size} c=1, ${rounds} interleaved rounds of ${calls}; µs, medians of the rounds' medians`);
  for (const [who, s] of Object.entries(seen)) {
    const host = median(s.host);
    const child = median(s.child);
    console.log(
      `  ${who.padEnd(7)} read → next write: host ${host.toFixed(1)}  child ${child.toFixed(1)}  both ${(host + child).toFixed(1)}; wall ${median(s.wall).toFixed(1)} a round trip`,
    );
  }
  if (base) {
    const paired = (pick: (s: { host: number[]; child: number[]; wall: number[] }, i: number) => number) => {
      const ratios = seen
        .base!.host.map((_, i) => pick(seen.base!, i) / pick(seen.nexo!, i))
        .sort((x, y) => x - y);
      return `${median(ratios).toFixed(3)} (${ratios[0]!.toFixed(2)}–${ratios[ratios.length - 1]!.toFixed(2)})`;
    };
    console.log(
      `  paired base/nexo by round: both ${paired((s, i) => s.host[i]! + s.child[i]!)}, host ${paired((s, i) => s.host[i]!)}, child ${paired((s, i) => s.child[i]!)}, wall ${paired((s, i) => s.wall[i]!)}`,
    );
  }
}

await main();
