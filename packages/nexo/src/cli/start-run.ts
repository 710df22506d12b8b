/**
 * The work behind `nexo start`: load and validate the config dir, boot the daemon, serve until
 * SIGINT/SIGTERM, shut down cleanly, exit 0. Config problems are printed with file, line and key
 * and exit 2; nothing is started then.
 */
import { ConfigError } from "../config/index.js";
import { loadDaemonConfig } from "../daemon/config/index.js";
import { Daemon } from "../daemon/daemon.js";
import { startHealthServer } from "../daemon/http.js";
import { acquireStateLock, StateLockError } from "../daemon/lock.js";
import { daemonReadiness } from "../daemon/readiness.js";
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

  // One daemon per state dir: a second one is refused (a dead owner's lock is taken over).
  let lock: Awaited<ReturnType<typeof acquireStateLock>>;
  try {
    lock = await acquireStateLock(spec.stateDir);
  } catch (error) {
    if (!(error instanceof StateLockError)) throw error;
    process.stderr.write(`nexo start: ${error.message}\n`);
    return 1;
  }
  if (lock.replaced)
    logger.warn({ lock: lock.path }, "took over the lock of a daemon that is no longer running");

  // Whatever happens to this process, no plugin or MCP server outlives it.
  const removeHooks = installExitHooks({ signals: [] });
  let daemon: Daemon;
  let health: Awaited<ReturnType<typeof startHealthServer>> | undefined;
  try {
    daemon = await Daemon.start(spec);
    const http = config.daemon.http;
    if (http.enabled) {
      health = await startHealthServer({
        host: http.host,
        port: http.port,
        ...(http.token ? { token: http.token } : {}),
        metrics: daemon.metrics,
        readiness: daemonReadiness({ broker: daemon.broker, plugins: daemon.plugins }),
        logger,
      });
      logger.info({ url: health.url }, "health and metrics listening");
    }
  } catch (error) {
    logger.error({ err: (error as Error).stack }, "the daemon could not start");
    process.stderr.write(`nexo start: ${(error as Error).message}\n`);
    await health?.close();
    removeHooks();
    lock.release();
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
  await health?.close();
  removeHooks();
  lock.release();
  return 0;
}
