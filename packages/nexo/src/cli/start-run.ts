/**
 * The work behind `nexo start`: load and validate the config dir, boot the daemon, serve until
 * SIGINT/SIGTERM, shut down cleanly, exit 0. Config problems are printed with file, line and key
 * and exit 2; nothing is started then.
 */
import { ConfigError } from "../config/index.js";
import { loadDaemonConfig } from "../daemon/config/index.js";
import { Daemon } from "../daemon/daemon.js";
import { ConfigReloader } from "../daemon/reload.js";
import { specFromConfig } from "../daemon/spec.js";
import { installExitHooks } from "../extensions/reaper.js";
import { createLogger } from "../log.js";

export async function runStart(options: { config: string; stateDir?: string }): Promise<number> {
  const logger = createLogger({ base: { component: "daemon" } });
  const env = options.stateDir ? { ...process.env, NEXO_STATE_DIR: options.stateDir } : process.env;
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
    logger.error({ err: (error as Error).stack }, "the daemon could not start");
    process.stderr.write(`nexo start: ${(error as Error).message}\n`);
    removeHooks();
    return 1;
  }
  const reloader = new ConfigReloader(options.config, daemon, env, logger);
  reloader.start();
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      reloader.stop();
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
