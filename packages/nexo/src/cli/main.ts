#!/usr/bin/env node
// The `nexo` executable: take the secrets out of the environment, parse argv with the program of
// cli/program.ts and map failures to exit codes. The program (commander and every command's
// declaration) is imported only after the fast starts had their look at argv: `nexo app-server` on
// stdio answers its first `initialize` (cli/app-server-fast.ts) and `nexo agent --json-stream`
// writes `ready` (cli/agent-fast.ts) before any of it loads.
import { setFlagsFromString } from "node:v8";
import { captureSecrets } from "../secrets/index.js";

// Node's fetch (every model call) parses HTTP with llhttp compiled to WebAssembly. After a response
// or two V8 re-compiles llhttp's hot functions with its optimizing tier on a background thread, and
// an exiting process waits for that compile to finish: a one-shot `nexo agent --json-stream` spent
// 0.4-0.9 s between its last answer and its exit (a bare `fetch` then `process.exit` too; 5-30 ms
// with this). Ten times V8's default budget keeps a short-lived command in the baseline tier; a
// long stream or a daemon still earns the optimized code. Set before any WebAssembly is compiled.
setFlagsFromString("--wasm-tiering-budget=18000000");

// Before anything reads the environment or starts a child: secrets leave process.env and
// /proc/<pid>/environ, and the start-up view handed to the commands keeps them (secrets/capture.ts).
const startup = captureSecrets();
if (startup.warning !== undefined) {
  const { createLogger } = await import("../log.js");
  createLogger({ base: { component: "secrets" } }).warn(
    { secrets: startup.captured },
    `secrets stay readable by other processes of this user: ${startup.warning}`,
  );
}

/** Whether a fast start took this launch (then the program is never built). */
async function startedFast(args: readonly string[]): Promise<boolean> {
  if (args[0] === "agent") {
    const fast = await import("./agent-fast.js");
    const launch = fast.fastAgentLaunch(args.slice(1), startup.env);
    if (launch === undefined) return false;
    await fast.serveAgentFast(launch, startup.env);
    return true;
  }
  if (args[0] !== "app-server") return false;
  const fast = await import("./app-server-fast.js");
  const flags = fast.fastAppServerFlags(args.slice(1), startup.env);
  if (flags === undefined) return false;
  await fast.serveAppServerFast(flags, startup.env);
  return true;
}

try {
  if (!(await startedFast(process.argv.slice(2)))) {
    const { buildProgram } = await import("./program.js");
    await buildProgram(startup.env).parseAsync(process.argv);
  }
} catch (error) {
  const [{ CommanderError }, { exitCodeOfCommanderError }] = await Promise.all([
    import("commander"),
    import("./exit-codes.js"),
  ]);
  if (error instanceof CommanderError) process.exit(exitCodeOfCommanderError(error));
  process.stderr.write(`nexo: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
