/**
 * `nexo agent --json-stream`: one conversation per process over the JSON stream protocol, the way
 * AionUi spawns its agent. This file declares the flags; cli/agent-run.ts does the work.
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import type { AgentFlags } from "../doors/jsonstream/bootstrap.js";

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

export function registerAgent(program: Command, env: NodeJS.ProcessEnv): void {
  program
    .command("agent")
    .description(
      "run one conversation over the JSON stream protocol on stdin/stdout (for UIs such as AionUi)",
    )
    .option("--json-stream", "speak the JSON stream protocol (required)")
    .addOption(
      new Option(
        "--provider <name>",
        "anthropic | openai | scripted (default: from the API key set, else scripted)",
      ),
    )
    .option("--model <id>", "model id (default depends on the provider)")
    .option("--max-tokens <n>", "output token limit per model call", integer)
    .option("--max-turns <n>", "model calls per message", integer)
    .option(
      "--base-url <url>",
      "provider endpoint, with or without a trailing /v1 (OpenAI-compatible servers)",
    )
    .option("--system-prompt <text>", "system prompt")
    .option("--auto-approve", "start in yolo mode: run every tool without asking")
    .option("--workspace <path>", "directory the file tools work in (default: the current directory)")
    .option(
      "--session-id <id>",
      "use this session id: created, or opened if it exists without messages (error if it has messages)",
    )
    .option("--resume <id>", "resume a session (or 'latest') with its whole history")
    .option(
      "--state-dir <dir>",
      "where sessions are stored (default: $NEXO_STATE_DIR or ~/.local/state/nexo)",
    )
    .option("--agent-id <id>", "the agent id sessions are stored under", "default")
    .option("--allow-outside-workspace", "let file tools leave the workspace (off unless given)")
    .action(async (options: AgentFlags & { jsonStream?: boolean }) => {
      // Loaded on use: `nexo --version` and other commands should not pay for the engine.
      const { runAgent } = await import("./agent-run.js");
      await runAgent(options, env);
    });
}
