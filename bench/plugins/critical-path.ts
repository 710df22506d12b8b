/**
 * The critical path of one call in flight, per side, for the three contenders of the plugin
 * benchmark: from a message's bytes reaching JavaScript to the next write, in the host (reply in,
 * next request out) and in the serving child (request in, reply out), interleaved
 * (bench/plugins/critical-path-hook.mjs measures; every process of the run loads it).
 *
 * When the two processes run on different CPUs, each waits for the other only for this part of
 * its work (what a process does after its write overlaps with the other side); when they share
 * one CPU, the whole CPU per call counts (bench/plugins/cpu.ts). docs/performance.md, plugin
 * tool.invoke, "where the round trip goes".
 *
 *   node --import tsx bench/plugins/critical-path.ts [rounds=5] [calls per round=3000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "../lib.js";
import { type Contender, mcpContender, nexoContender } from "./contenders.js";
import { cpuPerCall } from "./cpu.js";
import { hookedEchoTool, hookedFloorContender, timedRound } from "./hooked-child.js";

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  const calls = Number(process.argv[3] ?? 3000);
  const dir = mkdtempSync(join(tmpdir(), "nexo-critical-path-"));
  const hook = `${new URL("./critical-path-hook.mjs", import.meta.url).href}?dir=${encodeURIComponent(dir)}`;
  const contenders: Record<string, Contender> = {};
  try {
    contenders.nexo = await nexoContender(hookedEchoTool(dir, hook));
    contenders.mcp = await mcpContender(["--import", hook]);
    contenders.floor = await hookedFloorContender(hook);
    const args = { text: "hello", n: 1 };
    const seen: Record<string, { host: number[]; child: number[]; wall: number[] }> = {};
    for (const c of Object.values(contenders)) await cpuPerCall(c, args, 1, 8000);
    const names = Object.keys(contenders);
    for (let r = 0; r < rounds; r++) {
      for (const who of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
        const { host, child, cpu } = await timedRound(dir, contenders[who]!, args, 1, calls);
        const s = seen[who] ?? { host: [], child: [], wall: [] };
        seen[who] = s;
        s.host.push(host);
        s.child.push(child);
        s.wall.push(cpu.wall);
      }
    }
    for (const [who, s] of Object.entries(seen)) {
      const host = median(s.host);
      const child = median(s.child);
      console.log(
        `${who.padEnd(5)} read → next write: host ${host.toFixed(1)} µs, child ${child.toFixed(1)} µs, both ${(host + child).toFixed(1)} µs; wall ${median(s.wall).toFixed(1)} µs a round trip (medians over ${rounds} rounds of ${calls})`,
      );
    }
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
