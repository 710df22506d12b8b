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
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { LineTransport } from "@nexo/wire";
import { ConfigError } from "../config/index.js";
import { loadAppServerFile } from "../doors/appserver/config.js";
import { MAX_MESSAGE_BYTES } from "../doors/appserver/host.js";
import { ListenError, parseListen } from "../doors/appserver/listen.js";
import { createAppServer } from "../doors/appserver/server.js";
import { listenWebSocket, type WebSocketListener } from "../doors/appserver/websocket-listener.js";
import { createLogger } from "../log.js";
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

/** How long a SIGTERM waits for cancelled turns to persist before leaving anyway. */
const SIGNAL_GRACE_MS = 1500;

function fatal(message: string): never {
  process.stderr.write(`nexo app-server: ${message}\n`);
  process.exit(2);
}

export async function runAppServer(flags: AppServerFlags, env: NodeJS.ProcessEnv): Promise<void> {
  const logger = createLogger({ base: { component: "appserver" } });
  let file: Awaited<ReturnType<typeof loadAppServerFile>> = {};
  if (flags.config !== undefined) {
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

  const host = createAppServer({ version: NEXO_VERSION, workspace, logger });
  let listener: WebSocketListener | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.debug({ reason }, "AppServer stopping");
      host.close(reason);
      const timer = setTimeout(() => process.exit(0), SIGNAL_GRACE_MS);
      timer.unref();
      await listener?.close();
      // stdout may still hold queued lines: let them drain, then leave with success.
      process.stdout.write("", () => process.exit(0));
    })();
    return stopping;
  };
  process.once("SIGTERM", () => void stop("received SIGTERM"));
  process.once("SIGINT", () => void stop("received SIGINT"));

  if (plan.websocket) {
    try {
      listener = await listenWebSocket({ ...plan.websocket, server: host, logger });
    } catch (error) {
      fatal((error as Error).message);
    }
    // One plain line whatever the log level: people and launchers read where to connect from it.
    process.stderr.write(
      `nexo app-server: listening on ${listener.url}${plan.websocket.token === undefined ? "" : "?token=…"}\n`,
    );
  }
  if (plan.stdio) {
    const stdio = host.accept(
      new LineTransport({ input: process.stdin, output: process.stdout, maxFrameBytes: MAX_MESSAGE_BYTES }),
      { kind: "stdio" },
    );
    stdio.onClose(() => void stop("stdin closed"));
  }
}
