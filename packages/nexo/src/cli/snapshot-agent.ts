/**
 * The startup snapshot of `nexo agent` (snapshot-start.ts): the json-stream door, its engine,
 * store and schemas, and the Anthropic SDK, evaluated when the snapshot is built; at start, the
 * fast start of agent-fast.ts.
 */
import "../engine/providers/anthropic-sdk.js";
import { fastAgentLaunch, serveAgentFast } from "./agent-fast.js";
import "./agent-run.js";
import { fromSnapshot } from "./snapshot-start.js";

fromSnapshot((args, env) => {
  const launch = fastAgentLaunch(args, env);
  return launch === undefined ? undefined : () => serveAgentFast(launch, env);
});
