/**
 * The smallest config directory a real `nexo start` boots like the quickstart's daemon: one agent on
 * the scripted model, the demo tools plugin (a real child process with three tools) and a health
 * listener on a free loopback port, its state inside the directory. For the tests that start the
 * daemon as a process and watch what it loads or holds.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const DEMO_TOOLS = fileURLToPath(new URL("../../../../examples/plugins/demo-tools/", import.meta.url));

/** Writes the config into a fresh temporary directory named after `prefix`; returns its path. */
export function demoToolsConfigDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(
    join(dir, "agents.yaml"),
    "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n",
  );
  writeFileSync(join(dir, "plugins.yaml"), `plugins:\n  - dir: ${JSON.stringify(DEMO_TOOLS)}\n`);
  writeFileSync(
    join(dir, "daemon.yaml"),
    `state_dir: ${join(dir, "state")}\nhttp: { bind: "127.0.0.1:0" }\n`,
  );
  return dir;
}
