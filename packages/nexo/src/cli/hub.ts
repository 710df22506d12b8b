/**
 * `nexo hub`: the per-user process DotCraft Desktop's local mode asks for a workspace's AppServer
 * (it spawns `<binary> hub` when it finds no live hub in `~/.craft/hub/hub.lock`). This file
 * declares the flags; cli/hub-run.ts does the work (loaded on use).
 */
import type { Command } from "commander";
import type { HubFlags } from "./hub-run.js";

export function registerHub(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("hub")
    .description(
      "find or start the AppServer of a workspace for local clients (DotCraft Desktop's local mode)",
    )
    .option("--port <port>", "the loopback port of the hub's HTTP API (default: a free one)")
    .option("--config <dir>", "a config directory every AppServer the hub starts is given")
    .action(async (options: HubFlags) => {
      const { runHub } = await import("./hub-run.js");
      await runHub(options, env);
    });
}
