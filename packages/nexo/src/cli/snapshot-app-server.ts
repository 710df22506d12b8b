/**
 * The startup snapshot of `nexo app-server` (snapshot-start.ts). What the AppServer door loads
 * that holds no state of a run — pino and the logger, the Anthropic SDK — is
 * evaluated when the snapshot is built; at start, the fast start of app-server-fast.ts answers
 * `initialize`, and the door's own modules are evaluated from the snapshot's script as it imports
 * them (no module loading: they are in the script). The door is not evaluated at build time
 * because its modules create Node handles at load (the daemon config's loopback `BlockList`),
 * which a snapshot cannot hold.
 */
import "../engine/providers/anthropic-sdk.js";
import "../log.js";
import { fastAppServerFlags, serveAppServerFast } from "./app-server-fast.js";
import { fromSnapshot } from "./snapshot-start.js";

fromSnapshot((args, env) => {
  const flags = fastAppServerFlags(args, env);
  return flags === undefined ? undefined : () => serveAppServerFast(flags, env);
});
