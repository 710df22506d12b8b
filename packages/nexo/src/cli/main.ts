#!/usr/bin/env node
// The `nexo` executable: take the secrets out of the environment, parse argv with the program of
// cli/program.ts and map failures to exit codes.
import { setFlagsFromString } from "node:v8";
import { CommanderError } from "commander";
import { captureSecrets } from "../secrets/index.js";
import { exitCodeOfCommanderError } from "./exit-codes.js";
import { buildProgram } from "./program.js";

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

try {
  await buildProgram(startup.env).parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(exitCodeOfCommanderError(error));
  process.stderr.write(`nexo: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
