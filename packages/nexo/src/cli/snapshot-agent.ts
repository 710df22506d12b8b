/**
 * The startup snapshot of `nexo agent` (snapshot-start.ts): the json-stream door, its engine,
 * store and schemas, and the Anthropic SDK, evaluated when the snapshot is built; at start, the
 * fast start of agent-fast.ts. A launch naming its session (`--session-id`, `--resume`: what AionUi
 * sends on every spawn) cannot write `ready` before the store is read, but the door is already
 * here, so it goes to the door directly rather than to the ES module entry in a second process.
 */
import "../engine/providers/anthropic-sdk.js";
import { agentLaunchFlags, fastAgentLaunch, serveAgentFast } from "./agent-fast.js";
import { runAgent } from "./agent-run.js";
import { fromSnapshot } from "./snapshot-start.js";

fromSnapshot((args, env) => {
  const launch = fastAgentLaunch(args, env);
  if (launch !== undefined) return () => serveAgentFast(launch, env);
  const flags = agentLaunchFlags(args);
  return flags === undefined ? undefined : () => runAgent(flags, env);
});
