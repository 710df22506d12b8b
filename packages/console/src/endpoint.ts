/**
 * Where the console listens, for `nexo console url`: `console.json` in its state directory,
 * written atomically once the server is up and removed when the console stops.
 */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { microapp } from "@nexo/wire/schemas";

export function writeEndpoint(stateDir: string, url: string): () => void {
  const path = join(stateDir, microapp.CONSOLE_ENDPOINT_FILE);
  const endpoint: microapp.ConsoleEndpoint = { url, pid: process.pid, started_at_ms: Date.now() };
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(endpoint)}\n`, { mode: 0o600 });
  renameSync(temp, path);
  return () => rmSync(path, { force: true });
}
