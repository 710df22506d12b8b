/**
 * A child timed by the critical-path hook (critical-path-hook.mjs), from the benchmark's side: the
 * echo tool plugin started with the hook loaded first, and the spans the hook measured in a child,
 * asked for with SIGUSR2, and a round timed by both. Shared by plugins/critical-path.ts, plugins/ab.ts and wire/critical-path.ts.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "../lib.js";
import { type Contender, floorContender } from "./contenders.js";
import { type CpuPerCall, cpuPerCall } from "./cpu.js";
import { takeSpans } from "./critical-path-hook.mjs";

/** The repository this file is in: the echo tool plugin critical-path.ts times. */
const THIS_TREE = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `tree`'s echo tool plugin with its node loading `hook` first: a manifest of its own in
 * `dir`/echo-tool[-label] pointing at the tree's entry (nothing copied).
 */
export function hookedEchoTool(dir: string, hook: string, tree = THIS_TREE, label?: string): string {
  const echo = join(tree, "bench/plugins/echo-tool");
  const toml = readFileSync(join(echo, "nexo-plugin.toml"), "utf8");
  const entry = 'args = ["plugin.mjs"]';
  if (!toml.includes(entry)) throw new Error(`${tree}'s echo tool manifest no longer says ${entry}`);
  const plugin = join(dir, label === undefined ? "echo-tool" : `echo-tool-${label}`);
  mkdirSync(plugin);
  const args = JSON.stringify(["--import", hook, join(echo, "plugin.mjs")]);
  writeFileSync(join(plugin, "nexo-plugin.toml"), toml.replace(entry, `args = ${args}`));
  return plugin;
}

/** The child's spans since the last ask (SIGUSR2 makes its hook write them to `dir`). */
export async function childSpans(dir: string, pid: number): Promise<number[]> {
  const file = join(dir, `${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, "SIGUSR2");
  for (let waited = 0; !existsSync(file); waited += 5) {
    if (waited > 5000) throw new Error(`the child ${pid} did not write its spans`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return JSON.parse(readFileSync(file, "utf8")) as number[];
}

/**
 * The floor contender with every process it starts loading `hook`: its child inherits this
 * process's environment (bench/wire/contenders.ts), so the hook goes in through NODE_OPTIONS, set
 * for the spawn only.
 */
export async function hookedFloorContender(hook: string): Promise<Contender> {
  const nodeOptions = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${nodeOptions ?? ""} --import=${hook}`.trim();
  try {
    return await floorContender();
  } finally {
    if (nodeOptions === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = nodeOptions;
  }
}

/** One measured round: the medians of both sides' spans (µs) over `calls` calls, and their CPU. */
export async function timedRound(
  dir: string,
  contender: Contender,
  args: Record<string, unknown>,
  concurrency: number,
  calls: number,
): Promise<{ host: number; child: number; cpu: CpuPerCall }> {
  // What both sides measured before this round (the warm-up, other rounds) is dropped first.
  await childSpans(dir, contender.pid!);
  takeSpans();
  const cpu = await cpuPerCall(contender, args, concurrency, calls);
  const host = median(takeSpans());
  const child = median(await childSpans(dir, contender.pid!));
  return { host, child, cpu };
}
