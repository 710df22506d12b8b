/**
 * `nexo dev mock-llm --port N --script FILE`: runs the mock LLM server until SIGINT/SIGTERM and
 * prints its base URL on stdout (point a provider's base_url at it). Script errors are reported
 * on stderr with exit code 2.
 */

import type { MockScript } from "@nexo/mock-llm";
import { type Command, InvalidArgumentError } from "commander";

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidArgumentError("expected a port number between 0 and 65535");
  }
  return port;
}

/** The `dev` command group, created on first use so several dev tools can share it. */
function devCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === "dev") ??
    program.command("dev").description("tools for developing, testing and demonstrating nexo")
  );
}

export function registerDevMockLlm(program: Command): void {
  devCommand(program)
    .command("mock-llm")
    .description("serve Anthropic's and OpenAI's streaming APIs from a script, recording every request")
    .option(
      "--script <file>",
      "JSON script of responses (see docs/providers.md); without one every request fails",
    )
    .option("--port <n>", "port to listen on; 0 picks a free one", parsePort, 0)
    .option("--host <address>", "address to bind", "127.0.0.1")
    .action(async (options: { script?: string; port: number; host: string }) => {
      // Loaded on use, like every command's implementation, to keep the CLI's start-up small.
      const { loadMockScript, MockScriptError } = await import("@nexo/mock-llm");
      const { MockLlmServer } = await import("@nexo/mock-llm");
      let script: MockScript = { responses: [] };
      if (options.script !== undefined) {
        try {
          script = await loadMockScript(options.script);
        } catch (error) {
          if (!(error instanceof MockScriptError)) throw error;
          process.stderr.write(`nexo dev mock-llm: ${error.message}\n`);
          process.exitCode = 2;
          return;
        }
      }
      const server = new MockLlmServer({ script, port: options.port, host: options.host });
      const url = await server.start();
      process.stdout.write(`${url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      await server.close();
    });
}
