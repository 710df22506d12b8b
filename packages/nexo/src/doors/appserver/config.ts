/**
 * `appserver.yaml` in a config directory: where the AppServer listens and its token. Read by
 * `nexo app-server --config DIR` (flags and NEXO_APPSERVER_TOKEN win over it).
 *
 *   listen: ws://127.0.0.1:9100
 *   token: ${NEXO_APPSERVER_TOKEN}
 *   approval_timeout_s: 120     # an unanswered approval then fails its turn (-32020)
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { type Env, loadConfigFile } from "../../config/index.js";

export const APPSERVER_CONFIG_FILE = "appserver.yaml";

export const AppServerFileSchema = z.strictObject({
  /** stdio://, ws://HOST:PORT or ws+stdio://HOST:PORT (listen.ts). */
  listen: z.string().min(1).optional(),
  /** Required by `?token=` on the WebSocket; required for a non-loopback listen. */
  token: z.string().min(1).optional(),
  /** How long an approval request waits for an answer. Default 120 s. */
  approval_timeout_s: z.number().positive().max(86_400).optional(),
});

export const DEFAULT_APPROVAL_TIMEOUT_S = 120;
export type AppServerFile = z.infer<typeof AppServerFileSchema>;

/** The directory's appserver.yaml, or an empty config when it has none. Throws ConfigError. */
export async function loadAppServerFile(configDir: string, env: Env): Promise<AppServerFile> {
  const path = join(configDir, APPSERVER_CONFIG_FILE);
  if (!(await stat(path).catch(() => undefined))?.isFile()) return {};
  return loadConfigFile(path, AppServerFileSchema, { env });
}
