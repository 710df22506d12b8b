/**
 * The work behind `nexo hub`: listen on loopback, advertise the API in `~/.craft/hub/hub.lock`
 * (mode 0600: it holds the token), start workspaces' AppServers on request, and on SIGTERM /
 * SIGINT / `POST /v1/shutdown` stop them all, release the lock and exit 0. A second hub finds the
 * first's live lock and exits 1 saying so; a dead hub's lock is taken over.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { acquireLockFile, StateLockError } from "../daemon/lock.js";
import { HubEvents } from "../doors/appserver/hub/events.js";
import { listenHubApi } from "../doors/appserver/hub/http.js";
import { hubDir, hubLockPath } from "../doors/appserver/hub/paths.js";
import { ManagedAppServers } from "../doors/appserver/hub/registry.js";
import { isoTime } from "../iso-time.js";
import { createLogger } from "../log.js";
import { NEXO_VERSION } from "../version.js";

export interface HubFlags {
  port?: string;
  config?: string;
}

/** How often the health loop probes the servers (NEXO_HUB_HEALTH_MS overrides, for tests). */
const HEALTH_INTERVAL_MS = 10_000;

function fatal(message: string, status = 2): never {
  process.stderr.write(`nexo hub: ${message}\n`);
  process.exit(status);
}

export async function runHub(flags: HubFlags, env: NodeJS.ProcessEnv): Promise<void> {
  const logger = createLogger({ base: { component: "hub" } });
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    fatal(`--port ${flags.port} is not a port number`);
  const events = new HubEvents();
  const registry = new ManagedAppServers(
    {
      command: process.execPath,
      args: process.argv[1] === undefined ? [] : [process.argv[1]],
      extraArgs: flags.config === undefined ? [] : ["--config", resolve(flags.config)],
      env,
    },
    NEXO_VERSION,
    logger,
    events,
  );
  const token = randomBytes(32).toString("base64url");
  let leaving: Promise<void> | undefined;
  const leave = (reason: string): Promise<void> => {
    leaving ??= (async () => {
      logger.info({ reason }, "hub: stopping");
      clearInterval(health);
      events.emit("hub.stopping", null, { reason });
      await registry.stopAll();
      events.close();
      lock?.release();
      api?.server.close();
      process.exit(0);
    })();
    return leaving;
  };
  let lock: Awaited<ReturnType<typeof acquireLockFile>> | undefined;
  let api: Awaited<ReturnType<typeof listenHubApi>> | undefined;
  try {
    api = await listenHubApi(
      {
        registry,
        events,
        token,
        version: NEXO_VERSION,
        statePath: hubDir(),
        logger,
        onShutdown: () => void leave("shutdown requested"),
      },
      port,
    );
  } catch (error) {
    fatal(`cannot listen on 127.0.0.1:${port}: ${(error as Error).message}`);
  }
  try {
    mkdirSync(hubDir(), { recursive: true, mode: 0o700 });
    lock = await acquireLockFile(hubLockPath(), {
      extra: { apiBaseUrl: api.baseUrl, token, startedAt: isoTime(), version: NEXO_VERSION },
      mode: 0o600,
      holder: "nexo hub",
      subject: `the hub lock`,
      remedy: "that hub is already running; use it",
    });
  } catch (error) {
    api.server.close();
    if (error instanceof StateLockError && error.code === "locked") fatal(error.message, 1);
    fatal((error as Error).message);
  }
  process.on("exit", () => lock?.release());
  const every = Number(env.NEXO_HUB_HEALTH_MS ?? HEALTH_INTERVAL_MS);
  let checking = false;
  const health = setInterval(
    () => {
      if (checking) return;
      checking = true;
      void registry.checkHealth().finally(() => {
        checking = false;
      });
    },
    Number.isFinite(every) && every > 0 ? every : HEALTH_INTERVAL_MS,
  );
  process.once("SIGTERM", () => void leave("SIGTERM"));
  process.once("SIGINT", () => void leave("SIGINT"));
  // One plain line whatever the log level, for people; clients read hub.lock.
  process.stderr.write(`nexo hub: listening on ${api.baseUrl} (lock ${hubLockPath()})\n`);
}
