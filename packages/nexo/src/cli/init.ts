/**
 * `nexo init [DIR]`: writes a commented, valid config directory. This file declares the flags;
 * cli/init-run.ts does the work (loaded on use).
 */
import { type Command, Option } from "commander";
import { INIT_PROVIDERS } from "../scaffold/choices.js";
import type { InitFlags } from "./init-run.js";

export function registerInit(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("init")
    .description(
      "write a commented, ready-to-run config directory (asks for the provider and key on a terminal)",
    )
    .argument("[dir]", "the directory to write (created if missing)", ".")
    .option(
      "-y, --yes",
      "no questions: the provider of the API key set in the environment, else the offline model",
    )
    .addOption(new Option("--provider <name>", "the model provider").choices(INIT_PROVIDERS))
    .option("--model <id>", "the model id (default depends on the provider)")
    .option("--force", "overwrite files nexo init would write that already exist")
    .action(async (dir: string, options: InitFlags) => {
      const { runInit } = await import("./init-run.js");
      process.exitCode = await runInit(dir, options, env);
    });
}
