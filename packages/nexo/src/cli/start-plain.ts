/**
 * What a plain `nexo start` does once it is read (cli/start-fast.ts), without commander: the same
 * branch for both ways in, cli/main.ts (`node bin/nexo.js start ...`) and the daemon's own entry,
 * cli/daemon-main.ts (bin/nexo's `start`), so the two cannot drift apart.
 */
import { passLogFormatOn } from "../log-format.js";
import { type FastStart, fastStart } from "./start-fast.js";

export { type FastStart, fastStart };

/** Runs the daemon of a plain launch until SIGINT/SIGTERM (`env`: the start-up view, cli/start-up.ts). */
export async function startPlain(launch: FastStart, env: NodeJS.ProcessEnv): Promise<void> {
  // What commander's preAction hook does with the global flag (cli/program-base.ts).
  if (launch.logFormat !== undefined) passLogFormatOn(launch.logFormat, env);
  const { startDaemon } = await import("./start.js");
  await startDaemon(launch.flags, env);
}
