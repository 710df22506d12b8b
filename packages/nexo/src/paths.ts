/**
 * Where nexo keeps its state when nobody says otherwise: $NEXO_STATE_DIR, else
 * $XDG_STATE_HOME/nexo, else ~/.local/state/nexo. The database is `nexo.db` inside it.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NEXO_STATE_DIR) return resolve(env.NEXO_STATE_DIR);
  if (env.XDG_STATE_HOME) return join(resolve(env.XDG_STATE_HOME), "nexo");
  return join(homedir(), ".local", "state", "nexo");
}

export const DATABASE_FILE = "nexo.db";

/**
 * Written in the state dir by a daemon that serves the AppServer (`{url, pid, agent, startedAt}`,
 * no token), so `nexo chat --config DIR` can find a running daemon's AppServer.
 */
export const APPSERVER_ENDPOINT_FILE = "appserver.json";
