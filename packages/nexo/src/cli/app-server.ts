/**
 * `nexo app-server`: the AppServer protocol (DotCraft's JSON-RPC wire protocol) for Desktop, TUI,
 * SDK and IDE clients. With no flag it serves stdio with the current directory as the workspace,
 * the way every DotCraft launcher starts it. This file declares the flags; cli/app-server-run.ts
 * does the work (loaded on use).
 */
import type { Command } from "commander";
import type { AppServerFlags } from "./app-server-run.js";

/** `env` is the CLI's start-up view of the environment (provider keys and the token are read from it). */
export function registerAppServer(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("app-server")
    .description("serve the AppServer protocol (DotCraft Desktop, TUI and SDKs) on stdio or a WebSocket")
    .option("--listen <url>", "stdio:// (default), ws://HOST:PORT or ws+stdio://HOST:PORT")
    .option("--token <token>", "required as ?token= on the WebSocket (default: $NEXO_APPSERVER_TOKEN)")
    .option("--config <dir>", "a config directory: appserver.yaml, llm.yaml, agents.yaml")
    .option("--workspace <path>", "the workspace threads work in (default: the current directory)")
    .option(
      "--provider <name>",
      "anthropic | openai | scripted (default: from the config or the API key set)",
    )
    .option("--model <id>", "model id (default depends on the provider)")
    .option("--base-url <url>", "provider endpoint (OpenAI-compatible servers)")
    .option("--state-dir <dir>", "where threads are stored (default: $NEXO_STATE_DIR or ~/.local/state/nexo)")
    .action(async (options: AppServerFlags) => {
      const { runAppServer } = await import("./app-server-run.js");
      await runAppServer(options, env);
    });
}
