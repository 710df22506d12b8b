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
