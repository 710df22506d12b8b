/**
 * `nexo microapp new`, `nexo microapp check`, `nexo microapp call` (for microapp authors) and `nexo microapp audit
 * tail` (for operators). This file declares the commands; microapp-run.ts and microapp-audit.ts
 * do the work (loaded on use, like every command's implementation).
 */
import { type Command, Option } from "commander";
import { MICROAPP_LANGUAGES } from "../scaffold/choices.js";
import type { MicroappNewFlags } from "./microapp-new.js";
import type { MicroappRunOptions } from "./microapp-run.js";

const collect = (value: string, previous: string[]): string[] => [...previous, value];

function positiveInteger(name: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1)
      throw new Error(`${name} expects a positive whole number, got "${value}"`);
    return Number(value);
  };
}

export function registerMicroapp(program: Command): void {
  const command = program
    .command("microapp")
    .description("develop, test and audit nexo microapps (extensions.yaml)");
  const shared = (sub: Command) =>
    sub
      .option("--id <id>", "the extension id (default: plugin.toml's [plugin].id, else the directory's name)")
      .option("--config <json>", "the config object initialize hands the microapp")
      .option(
        "--grant <capability>",
        "grant this capability for the run (repeatable; default: all it declares)",
        collect,
        [],
      )
      .option(
        "--timeout <secs>",
        "per-call timeout in seconds (extensions.yaml timeout_secs)",
        positiveInteger("--timeout"),
      )
      .option("--json", "print JSON");

  command
    .command("new")
    .description(
      "write a working microapp with one tool and its test, ready for microapp check, and print its extensions.yaml entry",
    )
    .argument("<name>", "the microapp's name (its extension id: lowercase)")
    .addOption(new Option("--lang <language>", "the language").choices(MICROAPP_LANGUAGES).default("python"))
    .option("--dir <parent>", "where the microapp's directory is made (default: here)")
    .option(
      "--sdk <path>",
      "nexo-plugin-sdk for --lang ts: a packed tarball or an SDK directory (default: the one shipped with this nexo)",
    )
    .action(async (name: string, options: MicroappNewFlags) => {
      const { runMicroappNew } = await import("./microapp-new.js");
      process.exitCode = await runMicroappNew(name, options);
    });

  shared(
    command
      .command("check")
      .description(
        "run a microapp the way the daemon does and report: manifest, initialize, tool names, catalogue stability, hooks, -32601, admin calls, shutdown deadline",
      )
      .argument(
        "<path>",
        "the microapp's executable, or its directory (holding one executable main or main.<ext>)",
      ),
  ).action(async (target: string, options: MicroappRunOptions) => {
    const { runMicroappCheck } = await import("./microapp-run.js");
    process.exitCode = await runMicroappCheck(target, options);
  });

  shared(
    command
      .command("call")
      .description("start a microapp, run one tools/call, print its output, stop it")
      .argument("<path>", "the microapp's executable, or its directory")
      .argument("<tool>", "the tool name")
      .argument("[args]", "the arguments as a JSON object", "{}")
      .option("--agent <id>", "binding_context.agent_id to send", "nexo-cli"),
  ).action(
    async (target: string, tool: string, args: string, options: MicroappRunOptions & { agent: string }) => {
      const { runMicroappCall } = await import("./microapp-run.js");
      process.exitCode = await runMicroappCall(target, tool, args, options);
    },
  );

  command
    .command("audit")
    .description("the admin RPC audit log")
    .command("tail")
    .description("the newest admin calls microapps made, newest first")
    .option("--state-dir <dir>", "the daemon's state directory")
    .option("--config <dir>", "the daemon's config directory (its daemon.yaml says where the state is)")
    .option("--microapp-id <id>", "only this microapp's calls")
    .option("--method <method>", "only this method")
    .option("--result <result>", "only ok, error or denied")
    .option("--since-mins <n>", "only calls of the last n minutes", positiveInteger("--since-mins"))
    .option("--tenant <id>", "only calls for this tenant")
    .option("--limit <n>", "how many rows (at most 500)", positiveInteger("--limit"), 50)
    .option("--offset <n>", "skip this many rows", (value: string) => Number(value), 0)
    .option("--json", "print JSON")
    .action(async (options) => {
      const { runAuditTail } = await import("./microapp-audit.js");
      process.exitCode = await runAuditTail(options);
    });
}
