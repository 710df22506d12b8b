/**
 * The `nexo` program without its commands: name, version, the global `--log-format` flag, usage
 * errors as CommanderErrors. cli/program.ts adds every command to it; the startup snapshot of
 * `nexo agent` (cli/snapshot-agent.ts) adds only `agent`, which is all a launch beginning with
 * `agent` can reach, so both parse such a launch the same way (help, errors and exit codes alike)
 * without the snapshot holding the other commands.
 */
import { Command } from "commander";
import { isLogFormat, LOG_FORMATS, passLogFormatOn } from "../log-format.js";
import { NEXO_VERSION } from "../version.js";

/**
 * The program before its commands. `env` is the environment the commands read (`${VAR}`
 * substitution, provider keys): the CLI entry passes its start-up view, which still holds the
 * secrets taken out of process.env.
 */
export function baseProgram(env: NodeJS.ProcessEnv): Command {
  const program = new Command();
  program
    .name("nexo")
    .description("nexo: an agent daemon that runs LLM agents and hosts out-of-process extensions")
    .version(NEXO_VERSION, "-V, --version", "print the nexo version")
    // Failures throw a CommanderError that the entry maps to an exit code (usage errors are 2),
    // instead of commander calling process.exit itself. Set before the subcommands, which inherit it.
    .exitOverride()
    .option(
      "--log-format <format>",
      "json | pretty | auto: pretty lines on a terminal, JSON when piped (default: auto)",
    )
    // Logs are created by the commands (and by the processes they start), which all read
    // NEXO_LOG_FORMAT: the flag is passed on through it.
    .hook("preAction", () => {
      const format = program.opts<{ logFormat?: string }>().logFormat;
      if (format === undefined) return;
      if (isLogFormat(format)) {
        passLogFormatOn(format, env);
        return;
      }
      program.error(
        `error: option '--log-format <format>' must be one of ${LOG_FORMATS.join(", ")} (got "${format}")`,
        {
          code: "commander.invalidArgument",
        },
      );
    });
  return program;
}

/**
 * After a usage error, name the help of the command that was misused (`nexo plugin check --help`).
 * Called once every command is added.
 */
export function pointUsageErrorsAtOwnHelp(command: Command, path = command.name()): void {
  command.showHelpAfterError(`(run ${path} --help for usage)`);
  for (const sub of command.commands) pointUsageErrorsAtOwnHelp(sub, `${path} ${sub.name()}`);
}
