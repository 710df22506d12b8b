/**
 * The `nexo` command. Each subcommand lives in its own file under cli/ and registers itself here;
 * this file only assembles them. Output for humans goes to stdout, logs to stderr.
 */
import { Command } from "commander";
import { LOG_FORMATS } from "../log.js";
import { NEXO_VERSION } from "../version.js";
import { registerAgent } from "./agent.js";
import { registerAppServer } from "./app-server.js";
import { registerChat } from "./chat.js";
import { registerConfig } from "./config.js";
import { registerConsole } from "./console.js";
import { registerDevMockLlm } from "./dev-mock-llm.js";
import { registerDoctor } from "./doctor.js";
import { registerHub } from "./hub.js";
import { registerInit } from "./init.js";
import { registerMicroapp } from "./microapp.js";
import { registerPlugin } from "./plugin.js";
import { registerStart } from "./start.js";

/**
 * The program. `env` is the environment the commands read (`${VAR}` substitution, provider keys):
 * the CLI entry passes its start-up view, which still holds the secrets taken out of process.env.
 */
export function buildProgram(env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command();
  program
    .name("nexo")
    .description("nexo: an agent daemon that runs LLM agents and hosts out-of-process extensions")
    .version(NEXO_VERSION, "-V, --version", "print the nexo version")
    // Failures throw a CommanderError that cli/main.ts maps to an exit code (usage errors are 2),
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
      if (!(LOG_FORMATS as readonly string[]).includes(format)) {
        program.error(
          `error: option '--log-format <format>' must be one of ${LOG_FORMATS.join(", ")} (got "${format}")`,
          {
            code: "commander.invalidArgument",
          },
        );
      }
      process.env.NEXO_LOG_FORMAT = format;
      env.NEXO_LOG_FORMAT = format;
    });
  registerStart(program, env);
  registerInit(program, env);
  registerChat(program, env);
  registerAgent(program, env);
  registerAppServer(program, env);
  registerHub(program, env);
  registerConfig(program, env);
  registerDoctor(program, env);
  registerPlugin(program);
  registerMicroapp(program);
  registerConsole(program);
  registerDevMockLlm(program);
  pointUsageErrorsAtOwnHelp(program);
  return program;
}

/** After a usage error, name the help of the command that was misused (`nexo plugin check --help`). */
function pointUsageErrorsAtOwnHelp(command: Command, path = command.name()): void {
  command.showHelpAfterError(`(run ${path} --help for usage)`);
  for (const sub of command.commands) pointUsageErrorsAtOwnHelp(sub, `${path} ${sub.name()}`);
}
