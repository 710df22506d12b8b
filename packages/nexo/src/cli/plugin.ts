/**
 * `nexo plugin check` and `nexo plugin call`, for plugin authors. This file declares the commands;
 * cli/plugin-run.ts does the work (loaded on use, like every command's implementation).
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { PLUGIN_LANGUAGES } from "../scaffold/choices.js";
import type { PluginNewFlags } from "./plugin-new.js";

/**
 * Operator env for the plugin: repeatable `--env KEY=VALUE`. No default value is given to
 * commander (it would print "(default: {})" in the help); the actions read a missing one as {}.
 */
function collectEnv(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got "${value}"`);
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) };
}

export function registerPlugin(program: Command): void {
  const command = program.command("plugin").description("develop and test nexo plugins (nexo-plugin.toml)");

  command
    .command("new")
    .description("write a working plugin with one tool and its test, ready for plugin check")
    .argument("<name>", "the plugin's name (its id: lowercase, - becomes _)")
    .addOption(new Option("--lang <language>", "the language").choices(PLUGIN_LANGUAGES).default("python"))
    .option("--dir <parent>", "where the plugin's directory is made (default: here)")
    .option(
      "--sdk <path>",
      "nexo-plugin-sdk for --lang ts: a packed tarball or an SDK directory (default: the one shipped with this nexo)",
    )
    .action(async (name: string, options: PluginNewFlags) => {
      const { runPluginNew } = await import("./plugin-new.js");
      process.exitCode = await runPluginNew(name, options);
    });

  command
    .command("check")
    .description("validate a plugin: manifest, spawn, handshake, tool catalog, shutdown")
    .argument("<plugin>", "the plugin directory or its nexo-plugin.toml")
    .option("--json", "print the report as JSON")
    .option("--env <KEY=VALUE>", "give the plugin this variable (repeatable)", collectEnv)
    .action(async (target: string, options: { json?: boolean; env?: Record<string, string> }) => {
      const { runCheck } = await import("./plugin-run.js");
      process.exitCode = await runCheck(target, { ...options, env: options.env ?? {} });
    });

  command
    .command("call")
    .description("start a plugin, run one validated tool.invoke, print the result, stop it")
    .argument("<plugin>", "the plugin directory or its nexo-plugin.toml")
    .argument("<tool>", "the tool name")
    .argument("[args]", "the arguments as a JSON object", "{}")
    .option("--agent <id>", "the agent_id to send")
    .option("--json", "print the raw JSON result (or error) instead of its text")
    .option("--env <KEY=VALUE>", "give the plugin this variable (repeatable)", collectEnv)
    .action(
      async (
        target: string,
        tool: string,
        rawArgs: string,
        options: { agent?: string; json?: boolean; env?: Record<string, string> },
      ) => {
        const { callTool } = await import("./plugin-run.js");
        process.exitCode = await callTool(target, tool, rawArgs, { ...options, env: options.env ?? {} });
      },
    );
}
