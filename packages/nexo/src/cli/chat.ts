/**
 * `nexo chat`: an interactive terminal chat with an agent. This file declares the flags;
 * cli/chat-run.ts does the work (loaded on use), the chat itself lives in chat/.
 */
import type { Command } from "commander";
import type { ChatFlags } from "./chat-run.js";

export function registerChat(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("chat")
    .description(
      "chat with an agent in the terminal: a config directory's daemon, a running server, or a private one",
    )
    .option(
      "--config <dir>",
      "chat with this config directory's agent (uses its running daemon, else starts one)",
    )
    .option(
      "--agent <id>",
      "with --config: the agent to chat with (default: the only one, or appserver.yaml's)",
    )
    .option("--connect <url>", "chat through a running AppServer (ws://HOST:PORT/ws)")
    .option("--token <token>", "the AppServer token (default: $NEXO_APPSERVER_TOKEN, or appserver.yaml's)")
    .option("--resume <thread>", "continue a thread (its id is shown by /thread)")
    .option("--workspace <path>", "without --config: the directory the agent works in (default: here)")
    .option(
      "--provider <name>",
      "without --config: anthropic | openai | scripted (default: from the API key set)",
    )
    .option("--model <id>", "the model for the new thread")
    .option("--base-url <url>", "without --config: the provider endpoint (OpenAI-compatible servers)")
    .option("--state-dir <dir>", "where threads are stored (default: $NEXO_STATE_DIR or ~/.local/state/nexo)")
    .action(async (options: ChatFlags) => {
      const { runChat } = await import("./chat-run.js");
      process.exitCode = await runChat(options, env);
    });
}
