/**
 * `nexo app-server --config DIR` reads DIR's appserver.yaml (the schema is the daemon's, in
 * daemon/config/appserver.ts, so `nexo start` and `nexo config validate` read it the same way).
 * Flags and NEXO_APPSERVER_TOKEN win over it.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { type Env, loadConfigFile } from "../../config/index.js";
import { type AppServerFile, AppServerFileSchema } from "../../daemon/config/appserver.js";

export const APPSERVER_CONFIG_FILE = "appserver.yaml";

/** The directory's appserver.yaml, or an empty config when it has none. Throws ConfigError. */
export async function loadAppServerFile(configDir: string, env: Env): Promise<AppServerFile> {
  const path = join(configDir, APPSERVER_CONFIG_FILE);
  if (!(await stat(path).catch(() => undefined))?.isFile()) return {};
  return loadConfigFile(path, AppServerFileSchema, { env });
}
