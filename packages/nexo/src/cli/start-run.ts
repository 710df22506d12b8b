/**
 * The work behind `nexo start`: load and validate the config dir, start the daemon's components
 * (the lock, the health listener, the store, the broker, plugins, MCP, routing, channels, the
 * config watcher), serve until SIGINT/SIGTERM, stop them in reverse, exit 0.
 *
 * Config problems are printed with file, line and key and exit 2; nothing is started then. A
 * component that cannot start (the state dir is locked, the health port is taken, NATS is
 * unreachable, …) stops the ones started before it, is named on stderr with a hint, and exits 1.
 */
import { ConfigError } from "../config/index.js";
import { loadDaemonConfig } from "../daemon/config/index.js";
import { Daemon } from "../daemon/daemon.js";
import { ComponentStartError } from "../daemon/lifecycle.js";
import { specFromConfig } from "../daemon/spec.js";
import { installExitHooks } from "../extensions/reaper.js";
import { createLogger } from "../log.js";

/** `startupEnv` is the CLI's start-up view of the environment (secrets included, see secrets/capture.ts). */
export async function runStart(
  options: { config: string; stateDir?: string },
  startupEnv: NodeJS.ProcessEnv,
): Promise<number> {
  const logger = createLogger({ base: { component: "daemon" } });
  const env = options.stateDir ? { ...startupEnv, NEXO_STATE_DIR: options.stateDir } : startupEnv;
  let config: Awaited<ReturnType<typeof loadDaemonConfig>>;
  try {
    config = await loadDaemonConfig(options.config, { env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`nexo start: the config in ${options.config} is not valid:\n${error.message}\n`);
    return 2;
  }
  for (const warning of config.warnings) logger.warn({ warning }, "config warning");
  const spec = specFromConfig(config, env, logger);
  if (options.stateDir) spec.stateDir = options.stateDir;

  // Whatever happens to this process, no plugin or MCP server outlives it.
  const removeHooks = installExitHooks({ signals: [] });
  let daemon: Daemon;
  try {
    daemon = await Daemon.start(spec);
  } catch (error) {
    removeHooks();
    if (!(error instanceof ComponentStartError)) throw error;
    // Everything that had started is stopped again by now.
    process.stderr.write(`nexo start: ${error.message}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      daemon.stop(`received ${signal}`).then(resolve, (error: Error) => {
        logger.error({ err: error.stack }, "shutdown failed");
        resolve();
      });
    };
    const onInt = () => stop("SIGINT");
    const onTerm = () => stop("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
  });
  removeHooks();
  return 0;
}
