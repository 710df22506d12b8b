#!/usr/bin/env node
// The `nexo` executable: parse argv with the program of cli/program.ts and map failures to exit codes.
import { CommanderError } from "commander";
import { buildProgram } from "./program.js";

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  process.stderr.write(`nexo: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
