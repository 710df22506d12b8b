/**
 * One call in flight through two builds of nexo side by side, interleaved: this tree's host
 * sources and SDK against another tree's (a copy of the repository at the commit to compare with,
 * built, with its node_modules), the floor beside them for scale. Per round and contender: the
 * critical path on each side (a message's bytes reaching JavaScript → the next write, as
 * bench/plugins/critical-path.ts measures it), the CPU per call of host and child
 * (bench/plugins/cpu.ts), and the wall time of a round trip; then the medians and the new/old
 * ratios paired by round (the same minute of the machine).
 *
 *   cp -a . /tmp/old && rm /tmp/old/.git     (a built worktree, before the change)
 *   node --import tsx bench/plugins/ab.ts /tmp/old [rounds=7] [calls per round=3000] [concurrency=1]
 *
 * With more than one call in flight the critical path is no longer what the other side waits
 * for (calls overlap); the CPU per call still compares the builds.
 *
 * Only for deciding a change to the path (docs/performance.md, plugin tool.invoke, tenth pass);
 * the benchmark itself runs one build.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median } from "../lib.js";
import type { Contender } from "./contenders.js";
import { cpuPerCall } from "./cpu.js";
import { hookedEchoTool, hookedFloorContender, timedRound } from "./hooked-child.js";

const thisTree = resolve(fileURLToPath(new URL("../..", import.meta.url)));

interface Round {
  host: number;
  child: number;
  cpuHost: number;
  cpuChild: number;
  wall: number;
}

async function main(): Promise<void> {
  const other = process.argv[2];
  if (other === undefined || !existsSync(join(other, "bench/plugins/contenders.ts"))) {
    throw new Error("usage: bench/plugins/ab.ts <other tree> [rounds] [calls]");
  }
  const rounds = Number(process.argv[3] ?? 7);
  const calls = Number(process.argv[4] ?? 3000);
  const concurrency = Number(process.argv[5] ?? 1);
  const dir = mkdtempSync(join(tmpdir(), "nexo-plugins-ab-"));
  const hook = `${new URL("./critical-path-hook.mjs", import.meta.url).href}?dir=${encodeURIComponent(dir)}`;
  const contenders: Record<string, Contender> = {};
  try {
    const trees = { old: resolve(other), new: thisTree };
    for (const [label, tree] of Object.entries(trees)) {
      const module = (await import(pathToFileURL(join(tree, "bench/plugins/contenders.ts")).href)) as {
        nexoContender(pluginDir: string): Promise<Contender>;
      };
      contenders[label] = await module.nexoContender(hookedEchoTool(dir, hook, tree, label));
    }
    contenders.floor = await hookedFloorContender(hook);
    const args = { text: "hello", n: 1 };
    for (const c of Object.values(contenders)) await cpuPerCall(c, args, concurrency, 8000);
    const names = Object.keys(contenders);
    const seen: Record<string, Round[]> = {};
    for (let r = 0; r < rounds; r++) {
      for (const who of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
        const { host, child, cpu } = await timedRound(dir, contenders[who]!, args, concurrency, calls);
        const rounds = seen[who] ?? [];
        seen[who] = rounds;
        rounds.push({ host, child, cpuHost: cpu.host, cpuChild: cpu.child, wall: cpu.wall });
      }
    }
    const f = (n: number) => n.toFixed(2);
    for (const [who, s] of Object.entries(seen)) {
      const m = (of: (x: Round) => number) => median(s.map(of));
      console.log(
        `${who.padEnd(5)} critical path host ${f(m((x) => x.host))} + child ${f(m((x) => x.child))} = ${f(m((x) => x.host + x.child))} µs; CPU ${f(m((x) => x.cpuHost))} + ${f(m((x) => x.cpuChild))} = ${f(m((x) => x.cpuHost + x.cpuChild))} µs/call; wall ${f(m((x) => x.wall))} µs`,
      );
    }
    const paired = (of: (x: Round) => number) => {
      const ratios = seen.new!.map((x, i) => of(x) / of(seen.old![i]!));
      return `${f(median(ratios))} [${f(Math.min(...ratios))}–${f(Math.max(...ratios))}]`;
    };
    console.log(
      `new/old paired (median [range]) over ${rounds} rounds of ${calls}, ${concurrency} in flight: critical path host ${paired((x) => x.host)}, child ${paired((x) => x.child)}, both ${paired((x) => x.host + x.child)}; CPU host ${paired((x) => x.cpuHost)}, child ${paired((x) => x.cpuChild)}, both ${paired((x) => x.cpuHost + x.cpuChild)}; wall ${paired((x) => x.wall)}`,
    );
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
