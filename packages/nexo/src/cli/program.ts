/**
 * The `nexo` command. Each subcommand lives in its own file under cli/ and registers itself here;
 * this file only assembles them. Output for humans goes to stdout, logs to stderr.
 */
import type { Command } from "commander";
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
import { baseProgram, pointUsageErrorsAtOwnHelp } from "./program-base.js";
import { registerStart } from "./start.js";

/**
 * The program. `env` is the environment the commands read (`${VAR}` substitution, provider keys):
 * the CLI entry passes its start-up view, which still holds the secrets taken out of process.env.
 */
export function buildProgram(env: NodeJS.ProcessEnv = process.env): Command {
  const program = baseProgram(env);
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
