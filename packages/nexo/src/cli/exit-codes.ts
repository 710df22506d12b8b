/**
 * The exit codes every `nexo` command shares, so scripts can tell "you called it wrong" from "it
 * ran and failed". docs/cli.md lists them; a command documents any code of its own in its help.
 */
import type { CommanderError } from "commander";

export const EXIT_OK = 0;
/** The command ran and failed (a check failed, a daemon stopped on an error, a call was refused). */
export const EXIT_FAILURE = 1;
/** The command was called wrong or its configuration is invalid: nothing was started. */
export const EXIT_USAGE = 2;

/**
 * Commander reports `--help` and `--version` with exit code 0; everything else it throws is a
 * usage error (unknown option or command, missing argument, a command group without its
 * subcommand).
 */
export function exitCodeOfCommanderError(error: CommanderError): number {
  return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
}
