/**
 * The startup snapshot of `nexo agent` (snapshot-start.ts): the json-stream door, its engine,
 * store and schemas, and the Anthropic SDK, evaluated when the snapshot is built; at start, the
 * fast start of agent-fast.ts. A launch naming its session (`--session-id`, `--resume`: what AionUi
 * sends on every spawn) cannot write `ready` before the store is read, but the door is already
 * here, so it goes to the door directly. Anything else (`--help`, `--version`, an unknown flag or
 * a value only commander reads, a missing `--json-stream`) goes to commander, here too: the program
 * of program.ts with only its `agent` command, which is all a launch beginning with `agent`
 * reaches, so help, messages and exit statuses are the ES module entry's, in one process.
 * Commander and the command's declaration are loaded on that path only: their code is in the
 * script (and so in the blob), but not evaluated when the snapshot is built, which keeps the heap
 * every start deserializes as it was.
 */
import "../engine/providers/anthropic-sdk.js";
import { agentLaunchFlags, fastAgentLaunch, serveAgentFast } from "./agent-fast.js";
import { runAgent } from "./agent-run.js";
import { fromSnapshot } from "./snapshot-start.js";

fromSnapshot((args, env) => {
  const launch = fastAgentLaunch(args, env);
  if (launch !== undefined) return serveAgentFast(launch, env);
  const flags = agentLaunchFlags(args);
  if (flags !== undefined) return runAgent(flags, env);
  return runAgentCommandLine(args, env);
});

/** `nexo agent ARGS` through commander, as cli/main.ts runs a launch its fast start declines. */
async function runAgentCommandLine(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [
    { CommanderError },
    { exitCodeOfCommanderError },
    { baseProgram, pointUsageErrorsAtOwnHelp },
    { registerAgent },
  ] = await Promise.all([
    import("commander"),
    import("./exit-codes.js"),
    import("./program-base.js"),
    import("./agent.js"),
  ]);
  const program = baseProgram(env);
  registerAgent(program, env);
  pointUsageErrorsAtOwnHelp(program);
  try {
    await program.parseAsync(["agent", ...args], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) process.exit(exitCodeOfCommanderError(error));
    throw error;
  }
}
