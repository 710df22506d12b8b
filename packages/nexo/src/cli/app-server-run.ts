/**
 * The work behind `nexo app-server`: read the listen plan, serve stdio and/or a WebSocket, and stop
 * the way launchers expect. stdout carries JSON-RPC only; every log line goes to stderr, and a
 * start-up problem is one line on stderr and exit status 2.
 *
 * Stopping:
 * - stdio mode: stdin's end means the client is gone: no new work is accepted, running turns finish
 *   (an approval nobody can answer falls back to the server's policy), then exit 0;
 * - WebSocket only: stdin is not read at all (clients start it with stdin = /dev/null);
 * - SIGTERM / SIGINT: running turns are cancelled and persisted, exit 0 well within 2 s (launchers
 *   SIGKILL at 2.2 s).
 *
 * Start-up time is the time to the first `initialize` answer (launchers wait for it): what only some
 * launches need — the config file and the management facade (`--config`), the WebSocket listener
 * and the workspace lock (`--listen ws://…`) — is imported only by those launches.
 */
import { mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { LineTransport } from "@nexo/wire";
import { InitializeParamsSchema } from "@nexo/wire/schemas/appserver";
import { type AppServerFile, DEFAULT_APPROVAL_TIMEOUT_S } from "../daemon/config/appserver.js";
import { ListenError, parseListen } from "../daemon/config/appserver-listen.js";
import { standaloneSessions } from "../doors/appserver/agent.js";
import { CORE_FAMILIES } from "../doors/appserver/families/core.js";
import { MAX_MESSAGE_BYTES } from "../doors/appserver/host.js";
import type { AppServerManagement } from "../doors/appserver/management.js";
import { createThreadedAppServer } from "../doors/appserver/server.js";
import type { WebSocketListener } from "../doors/appserver/websocket-listener.js";
import { createLogger } from "../log.js";
import { DATABASE_FILE, defaultStateDir } from "../paths.js";
import { NEXO_VERSION } from "../version.js";

export interface AppServerFlags {
  listen?: string;
  token?: string;
  config?: string;
  workspace?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  stateDir?: string;
}

/**
 * stdin as the fast start (app-server-fast.ts) hands it over: what is left to read, and the
 * `initialize` params it answered already, if it did.
 */
export interface StdioHandOff {
  input: Readable;
  initialized?: Record<string, unknown>;
}

/** How long a SIGTERM waits for cancelled turns to persist before leaving anyway (launchers kill at 2.2 s). */
const SIGNAL_GRACE_MS = 1200;
/** How long stdin's end waits for running turns to finish. */
const FINISH_GRACE_MS = 60_000;

function fatal(message: string): never {
  process.stderr.write(`nexo app-server: ${message}\n`);
  process.exit(2);
}

export async function runAppServer(
  flags: AppServerFlags,
  env: NodeJS.ProcessEnv,
  handOff?: StdioHandOff,
): Promise<void> {
  const logger = createLogger({ base: { component: "appserver" } });
  let file: AppServerFile = {};
  if (flags.config !== undefined) {
    const [{ loadAppServerFile }, { ConfigError }] = await Promise.all([
      import("../doors/appserver/config.js"),
      import("../config/index.js"),
    ]);
    try {
      file = await loadAppServerFile(resolve(flags.config), env);
    } catch (error) {
      fatal(
        error instanceof ConfigError ? error.message : `cannot read the config: ${(error as Error).message}`,
      );
    }
  }
  const token = flags.token ?? (env.NEXO_APPSERVER_TOKEN || undefined) ?? file.token;
  let plan: ReturnType<typeof parseListen>;
  try {
    plan = parseListen(flags.listen ?? file.listen, token);
  } catch (error) {
    if (error instanceof ListenError) fatal(error.message);
    throw error;
  }
  const workspace = resolve(flags.workspace ?? process.cwd());
  if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory()) {
    fatal(`workspace ${workspace} is not a directory`);
  }

  const stateDir = flags.stateDir ? resolve(flags.stateDir) : defaultStateDir(env);
  // With a config directory the management families edit its files (nothing of it runs here);
  // without one only the core families can serve, and nothing else is loaded.
  let management: AppServerManagement | undefined;
  let families = CORE_FAMILIES;
  if (flags.config !== undefined) {
    const [{ standaloneManagement }, all] = await Promise.all([
      import("../doors/appserver/standalone.js"),
      import("../doors/appserver/families/index.js"),
    ]);
    management = standaloneManagement(resolve(flags.config), env, file.agent);
    families = all.FAMILIES;
  }
  const server = createThreadedAppServer({
    version: NEXO_VERSION,
    workspace,
    logger,
    approvalTimeoutMs: (file.approval_timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000,
    openStore: async () => {
      const { Store } = await import("../store/index.js");
      mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      return Store.open(join(stateDir, DATABASE_FILE));
    },
    sessions: standaloneSessions({ flags, env, logger }),
    management,
    families,
    // A tuning knob for channel adapters' liveness probe (and for tests); default 30 s.
    channelHeartbeatMs: positiveNumber(env.NEXO_APPSERVER_ADAPTER_HEARTBEAT_MS),
  });
  const { threads } = server;
  let listener: WebSocketListener | undefined;
  let doorsClosed: Promise<void> | undefined;
  const closeDoors = (reason: string): Promise<void> => {
    doorsClosed ??= (async () => {
      logger.debug({ reason }, "AppServer stopping");
      const closing = server.close(reason);
      await listener?.close();
      await closing;
    })();
    return doorsClosed;
  };
  // stdout may still hold queued lines: let them drain, then leave with success.
  const leave = () => process.stdout.write("", () => process.exit(0));
  /** stdin's end: no new work; running turns finish and are persisted. */
  const finishAndLeave = async (): Promise<void> => {
    await closeDoors("stdin closed");
    await threads.shutdown(false, FINISH_GRACE_MS);
    leave();
  };
  /** A signal: running turns are cancelled and persisted; out within the launchers' 2 s. */
  const cancelAndLeave = async (signal: string): Promise<void> => {
    setTimeout(() => process.exit(0), SIGNAL_GRACE_MS + 300).unref();
    await closeDoors(`received ${signal}`);
    await threads.shutdown(true, SIGNAL_GRACE_MS);
    leave();
  };
  // Before the first await of a launch without --config: the fast start drops its own handlers as
  // soon as this function first returns to it (cli/fast-start-signals.ts).
  process.once("SIGTERM", () => void cancelAndLeave("SIGTERM"));
  process.once("SIGINT", () => void cancelAndLeave("SIGINT"));

  if (plan.websocket) {
    const [{ listenWebSocket }, { takeWorkspaceLock }] = await Promise.all([
      import("../doors/appserver/websocket-listener.js"),
      import("../doors/appserver/hub/workspace-lock.js"),
    ]);
    try {
      listener = await listenWebSocket({ ...plan.websocket, server, logger });
    } catch (error) {
      fatal((error as Error).message);
    }
    // One WebSocket server per workspace: the hub finds its owner in the lock and starts no other.
    try {
      const lock = await takeWorkspaceLock(workspace, {
        url: listener.url,
        managedByHub: env.NEXO_HUB_MANAGED === "1",
        version: NEXO_VERSION,
      });
      process.on("exit", () => lock.release());
    } catch (error) {
      await listener.close();
      fatal((error as Error).message);
    }
    // One plain line whatever the log level: people and launchers read where to connect from it.
    process.stderr.write(
      `nexo app-server: listening on ${listener.url}${plan.websocket.token === undefined ? "" : "?token=…"}\n`,
    );
  }
  // Adapter processes of subprocess external channels (appserver.yaml; only with --config).
  void server.startChannelProcesses().catch((error: Error) => {
    logger.error({ error: error.message }, "external channel processes could not start");
  });
  if (plan.stdio) {
    const stdio = server.accept(
      new LineTransport({
        input: handOff?.input ?? process.stdin,
        output: process.stdout,
        maxFrameBytes: MAX_MESSAGE_BYTES,
      }),
      {
        kind: "stdio",
        // stdout corked per tick: the notifications one engine event produces leave in one write.
        stream: process.stdout,
        // The fast start checked these params to be ones the schema takes; parsed here all the same,
        // so the connection holds exactly what its own `initialize` would have.
        ...(handOff?.initialized === undefined
          ? {}
          : { initialized: InitializeParamsSchema.parse(handOff.initialized) }),
      },
    );
    stdio.onClose(() => void finishAndLeave());
  }
}

function positiveNumber(text: string | undefined): number | undefined {
  const value = Number(text);
  return text && Number.isFinite(value) && value > 0 ? value : undefined;
}
