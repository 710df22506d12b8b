/**
 * `nexo start --config DIR`: the long-running daemon. This file declares the command;
 * cli/start-run.ts does the work (loaded on use).
 */
import type { Command } from "commander";
import type { StartFlags } from "./start-run.js";

export function registerStart(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("start")
    .description("run the daemon: agents, plugins, channels and routing from a config directory")
    // Checked in the action rather than with requiredOption: commander tests required options
    // before unknown ones, so `nexo start --confg x` would blame a missing --config (issue 14.10).
    .option("--config <dir>", "the config directory (agents.yaml, llm.yaml, plugins.yaml, …) (required)")
    .option("--state-dir <dir>", "overrides daemon.yaml state_dir and $NEXO_STATE_DIR")
    .option("--appserver <url>", "serve the AppServer at ws://HOST:PORT, whatever appserver.yaml says")
    .option("--appserver-agent <id>", "the agent that answers AppServer threads (with --appserver)")
    .action(async (options: StartFlags, command: Command) => {
      if (options.config === undefined) {
        command.error("error: required option '--config <dir>' not specified", {
          code: "commander.missingMandatoryOptionValue",
        });
      }
      await startDaemon({ ...options, config: options.config }, env);
    });
}

/**
 * Runs the daemon until SIGINT/SIGTERM and sets the exit code: what `nexo start` does once its flags
 * are read, by commander (above) or by the plain launch's reader (cli/start-fast.ts).
 */
export async function startDaemon(
  options: StartFlags & { config: string },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  // Before the daemon's modules load: start-up is where the young generation would grow and
  // where start-up-only code would be compiled to baseline code.
  const { holdBaselineCompilation, holdYoungGeneration } = await import("./start-heap.js");
  const youngGeneration = holdYoungGeneration(process.execArgv, env.NODE_OPTIONS);
  const baselineCode = holdBaselineCompilation(process.execArgv);
  const ready = () => {
    youngGeneration();
    baselineCode();
  };
  const { runStart } = await import("./start-run.js");
  process.exitCode = await runStart(options, env, ready);
}
