/**
 * The startup snapshot of `nexo app-server` (snapshot-start.ts): what the AppServer door loads
 * * that holds no state of a run — pino and the logger, the Anthropic SDK, Node's HTTP client —
 * is evaluated when the snapshot is built (zod is left to the door: its package says it has no side effects, so a bare import of it is dropped); at start, the fast start of app-server-fast.ts, and the
 * door's own modules evaluated from the snapshot's script as the fast start imports them. The door
 * itself is not evaluated at build time: its modules create Node handles at load (the daemon
 * config's loopback `BlockList`), which a snapshot cannot hold.
 */
import "node:http";
import "../engine/providers/anthropic-sdk.js";
import "../log.js";
import { fastAppServerFlags, serveAppServerFast } from "./app-server-fast.js";
import { fromSnapshot } from "./snapshot-start.js";

fromSnapshot((args, env) => {
  const flags = fastAppServerFlags(args, env);
  return flags === undefined ? undefined : () => serveAppServerFast(flags, env);
});
