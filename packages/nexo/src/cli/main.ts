#!/usr/bin/env node
// The `nexo` executable: take the secrets out of the environment, parse argv with the program of
// cli/program.ts and map failures to exit codes.
import { CommanderError } from "commander";
import { captureSecrets } from "../secrets/index.js";
import { exitCodeOfCommanderError } from "./exit-codes.js";
import { buildProgram } from "./program.js";

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
