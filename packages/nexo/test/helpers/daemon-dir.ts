/**
 * A real daemon started from a real config directory, for the services tests: the files are
 * written to a fresh directory (daemon.yaml gets a fresh state dir and no health listener unless
 * the test gives its own), loaded and validated like `nexo start` does, and the daemon started.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { adminRpc } from "../../src/admin/serve.js";
import { loadDaemonConfig } from "../../src/daemon/config/index.js";
import { Daemon } from "../../src/daemon/daemon.js";
import { specFromConfig } from "../../src/daemon/spec.js";
import { createLogger } from "../../src/log.js";

/** The example plugins' directories (loopback-channel, demo-tools, …). */
export const EXAMPLE_PLUGINS = fileURLToPath(new URL("../../../../examples/plugins/", import.meta.url));

/** A plugin's initialize may take this long in tests (NEXO_PLUGIN_INIT_TIMEOUT_MS). */
export const SLOW_MACHINE_INIT_MS = "30000";

export interface DaemonDir {
  dir: string;
  stateDir: string;
  daemon: Daemon;
  /** A config file's text now. */
  read(name: string): string;
  write(name: string, text: string): void;
}

export async function startFromDir(
  files: Record<string, string>,
  options: { watch?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<DaemonDir> {
  const dir = mkdtempSync(join(tmpdir(), "nexo-services-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-services-state-"));
  const all = { "daemon.yaml": `state_dir: ${stateDir}\nhttp: { enabled: false }\n`, ...files };
  for (const [name, text] of Object.entries(all)) {
    // A name may have folders (skills/tone/SKILL.md).
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return startIn(dir, stateDir, options);
}

/**
 * Starts a new daemon on a stopped one's config and state directories (the same database, the
 * same plugins' state): what a restart of `nexo start` does.
 */
export function restartFromDir(
  previous: DaemonDir,
  options: { watch?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<DaemonDir> {
  return startIn(previous.dir, previous.stateDir, options);
}

async function startIn(
  dir: string,
  stateDir: string,
  options: { watch?: boolean; env?: NodeJS.ProcessEnv },
): Promise<DaemonDir> {
  // The example plugins start through tsx; on a loaded machine that can outlast the default 5 s.
  const env = { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS, ...options.env };
  const logger = createLogger({ level: "silent" });
  const spec = specFromConfig(await loadDaemonConfig(dir, { env }), env, logger);
  const daemon = await Daemon.start(
    {
      ...spec,
      shutdownGraceMs: 2000,
      source: { dir, env, watch: options.watch ?? false, debounceMs: 100 },
    },
    // As nexo start composes it: the admin RPC serving the microapps.
    { microappRequests: adminRpc() },
  );
  return {
    dir,
    stateDir,
    daemon,
    read: (name) => readFileSync(join(dir, name), "utf8"),
    write: (name, text) => writeFileSync(join(dir, name), text),
  };
}
