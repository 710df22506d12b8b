/**
 * The built-in file tools as a model reaches them — through the registry, with only the
 * arguments under its control — and the attacker of the confinement race: a real concurrent
 * process (test/fixtures/symlink-swapper.mjs) that swaps a workspace directory for a symlink to a
 * directory outside, as fast as it can.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { builtinTools } from "../../src/engine/tools/builtins.js";
import { ToolRegistry } from "../../src/engine/tools/registry.js";
import type { ToolOutput } from "../../src/engine/types.js";
import { toolContext } from "./tools.js";

const SWAPPER = fileURLToPath(new URL("../fixtures/symlink-swapper.mjs", import.meta.url));

/** Calls a built-in tool confined to `workspace`. */
export function fileTools(
  workspace: string,
): (name: string, args: Record<string, unknown>) => Promise<ToolOutput> {
  const registry = new ToolRegistry();
  registry.registerAll(builtinTools());
  return (name, args) => registry.invoke(name, args, toolContext(workspace));
}

/**
 * Starts swapping `dir` ↔ a symlink to `target`; resolves once it has swapped at least once.
 * `stop` ends it and resolves to the number of swaps it made.
 */
export async function startSwapper(dir: string, target: string): Promise<{ stop: () => Promise<number> }> {
  const child = spawn(process.execPath, [SWAPPER, dir, target], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk: string) => {
    out += chunk;
  });
  const exited = once(child, "exit");
  const stop = async (): Promise<number> => {
    child.stdin!.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    return Number(/swaps (\d+)/.exec(out)?.[1] ?? 0);
  };
  const deadline = Date.now() + 10_000;
  while (!out.includes("ready")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the swapper did not start: ${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { stop };
}
