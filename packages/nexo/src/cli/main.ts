#!/usr/bin/env node
// The `nexo` executable: take the secrets out of the environment, parse argv with the program of
// cli/program.ts and map failures to exit codes. The program (commander and every command's
// declaration) is imported only after the fast starts had their look at argv: `nexo app-server` on
// stdio answers its first `initialize` (cli/app-server-fast.ts) and `nexo agent --json-stream`
// writes `ready` (cli/agent-fast.ts) before any of it loads, and a plain `nexo start` never loads
// it (cli/start-fast.ts, cli/start-plain.ts). The `nexo` command a user runs is
// bin/nexo, which starts this file (through bin/nexo.js), or for `nexo agent` the same fast start
// from a startup snapshot (cli/snapshot-start.ts), or for `nexo start` the daemon's own entry
// (cli/daemon-main.ts, which comes here for whatever its fast start declines).
import { startUp } from "./start-up.js";

const startup = await startUp();

/** Whether a fast start took this launch (then the program is never built). */
async function startedFast(args: readonly string[]): Promise<boolean> {
  if (args[0] === "start" || args[0]?.startsWith("--log-format")) {
    // The daemon: commander and the command declarations would be held for its whole life.
    const { fastStart, startPlain } = await import("./start-plain.js");
    const launch = fastStart(args);
    if (launch === undefined) return false;
    await startPlain(launch, startup.env);
    return true;
  }
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
