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
import { listenHubApi } from "../doors/appserver/hub/http.js";
import { hubDir, hubLockPath } from "../doors/appserver/hub/paths.js";
import { ManagedAppServers } from "../doors/appserver/hub/registry.js";
import { createLogger } from "../log.js";
import { NEXO_VERSION } from "../version.js";

export interface HubFlags {
  port?: string;
  config?: string;
}

function fatal(message: string, status = 2): never {
  process.stderr.write(`nexo hub: ${message}\n`);
  process.exit(status);
}

export async function runHub(flags: HubFlags, env: NodeJS.ProcessEnv): Promise<void> {
  const logger = createLogger({ base: { component: "hub" } });
  const port = flags.port === undefined ? 0 : Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    fatal(`--port ${flags.port} is not a port number`);
  const registry = new ManagedAppServers(
    {
      command: process.execPath,
      args: process.argv[1] === undefined ? [] : [process.argv[1]],
      extraArgs: flags.config === undefined ? [] : ["--config", resolve(flags.config)],
      env,
    },
    NEXO_VERSION,
    logger,
  );
  const token = randomBytes(32).toString("base64url");
  let leaving: Promise<void> | undefined;
  const leave = (reason: string): Promise<void> => {
    leaving ??= (async () => {
      logger.info({ reason }, "hub: stopping");
      await registry.stopAll();
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
      extra: { apiBaseUrl: api.baseUrl, token, startedAt: new Date().toISOString(), version: NEXO_VERSION },
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
  process.once("SIGTERM", () => void leave("SIGTERM"));
  process.once("SIGINT", () => void leave("SIGINT"));
  // One plain line whatever the log level, for people; clients read hub.lock.
  process.stderr.write(`nexo hub: listening on ${api.baseUrl} (lock ${hubLockPath()})\n`);
}
