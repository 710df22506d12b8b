/**
 * The work behind `nexo start`: load and validate the config dir, start the daemon's components
 * (the lock, the health listener, the store, the broker, plugins, MCP, routing, channels, the
 * config watcher), serve until SIGINT/SIGTERM, stop them in reverse, exit 0.
 *
 * Doors that run inside the daemon are composed here, above it: when appserver.yaml names a
 * `listen` address, the AppServer (doors/appserver/daemon-door.ts) starts after the daemon's
 * components and stops before them.
 *
 * Config problems are printed with file, line and key and exit 2; nothing is started then. A
 * component that cannot start (the state dir is locked, the health port is taken, NATS is
 * unreachable, …) stops the ones started before it, is named on stderr with a hint, and exits 1.
 */
import { adminRpc } from "../admin/serve.js";
import { ConfigError } from "../config/index.js";
import { appServerOverride } from "../daemon/config/appserver.js";
import { loadDaemonConfig } from "../daemon/config/index.js";
import { Daemon } from "../daemon/daemon.js";
import { type Component, ComponentStartError } from "../daemon/lifecycle.js";
import { specFromConfig } from "../daemon/spec.js";
import { installExitHooks } from "../extensions/reaper.js";
import { createLogger, type Logger } from "../log.js";

export interface StartFlags {
  config?: string;
  stateDir?: string;
  /** Serve the AppServer here (ws://HOST:PORT), overriding appserver.yaml's `listen`. */
  appserver?: string;
  appserverAgent?: string;
}

/**
 * `startupEnv` is the CLI's start-up view of the environment (secrets included, see
 * secrets/capture.ts). `onReady` runs once the daemon and its doors serve (or start-up has failed).
 */
export async function runStart(
  options: StartFlags & { config: string },
  startupEnv: NodeJS.ProcessEnv,
  onReady: () => void = () => {},
): Promise<number> {
  try {
    return await serve(options, startupEnv, onReady);
  } finally {
    onReady();
  }
}

async function serve(
  options: StartFlags & { config: string },
  startupEnv: NodeJS.ProcessEnv,
  onReady: () => void,
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
  let appServer = config.appserver;
  if (options.appserver !== undefined) {
    const ids = config.agents.map((agent) => agent.id);
    const override = appServerOverride(appServer, options.appserver, options.appserverAgent, ids, env);
    if (!override.ok) {
      process.stderr.write(`nexo start: ${override.problem}\n`);
      return 2;
    }
    appServer = override.value;
  }
  const spec = specFromConfig(config, env, logger);
  if (options.stateDir) spec.stateDir = options.stateDir;

  // Whatever happens to this process, no plugin or MCP server outlives it.
  const removeHooks = installExitHooks({ signals: [] });
  // SIGINT/SIGTERM are ours from before the first child starts: one that arrives while starting
  // (the ready line is written before start() returns, so a supervisor may already send it) is
  // kept and acted on once everything started is in place to be stopped — never the default
  // action, which would end the process without stopping its children.
  const signals = new StopSignals();
  let daemon: Daemon;
  const doors: Component[] = [];
  try {
    // The admin RPC sits above the daemon; nexo start composes it into the microapps component.
    daemon = await Daemon.start(spec, { microappRequests: adminRpc() });
  } catch (error) {
    removeHooks();
    signals.remove();
    if (!(error instanceof ComponentStartError)) throw error;
    // Everything that had started is stopped again by now.
    process.stderr.write(`nexo start: ${error.message}\n`);
    return 1;
  }
  if (appServer !== undefined) {
    const { appServerDoor } = await import("../doors/appserver/daemon-door.js");
    const door = appServerDoor(daemon, appServer, logger.child({ component: "appserver" }));
    try {
      await door.start();
      doors.push(door);
    } catch (error) {
      process.stderr.write(`nexo start: the AppServer cannot start: ${(error as Error).message}\n`);
      await daemon.stop("the AppServer could not start");
      signals.remove();
      removeHooks();
      return 1;
    }
  }
  onReady();
  const signal = await signals.first;
  signals.remove();
  await stopAll(doors, daemon, `received ${signal}`, logger).catch((error: Error) => {
    logger.error({ err: error.stack }, "shutdown failed");
  });
  removeHooks();
  return 0;
}

/**
 * The first SIGINT or SIGTERM, whenever it came; listening until `remove()`. A second one before
 * then (a person pressing Ctrl-C again while start-up goes on) is not swallowed: the handlers go and
 * the signal is sent again, so it ends the process as it would without them.
 */
class StopSignals {
  readonly first: Promise<NodeJS.Signals>;
  private readonly onInt: () => void;
  private readonly onTerm: () => void;

  constructor() {
    let resolve!: (signal: NodeJS.Signals) => void;
    this.first = new Promise((done) => {
      resolve = done;
    });
    let seen = false;
    const on = (signal: NodeJS.Signals) => {
      if (!seen) {
        seen = true;
        resolve(signal);
        return;
      }
      this.remove();
      process.kill(process.pid, signal);
    };
    this.onInt = () => on("SIGINT");
    this.onTerm = () => on("SIGTERM");
    process.on("SIGINT", this.onInt);
    process.on("SIGTERM", this.onTerm);
  }

  remove(): void {
    process.off("SIGINT", this.onInt);
    process.off("SIGTERM", this.onTerm);
  }
}

/** The doors first (newest first), so no client reaches a daemon whose parts are stopping. */
async function stopAll(
  doors: readonly Component[],
  daemon: Daemon,
  reason: string,
  logger: Logger,
): Promise<void> {
  for (const door of [...doors].reverse()) {
    try {
      await door.stop(reason);
    } catch (error) {
      logger.error({ door: door.name, err: (error as Error).stack }, "a door failed to stop");
    }
  }
  await daemon.stop(reason);
}
