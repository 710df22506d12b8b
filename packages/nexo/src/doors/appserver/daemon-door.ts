/**
 * The AppServer inside `nexo start`: a component the CLI adds after the daemon's own (the daemon
 * never imports a door). It serves appserver.yaml's WebSocket with the daemon's store, so threads
 * are the daemon's sessions, answered by one agent of agents.yaml with the daemon's providers,
 * plugin and MCP tools and hooks.
 *
 * A thread works in the agent's workspace whatever `workspacePath` a client names: the operator
 * chose that directory in agents.yaml, and a remote client must not move the agent elsewhere.
 *
 * Stopping (SIGTERM to the daemon): the listener closes, running turns are cancelled and
 * persisted within `graceMs`, then the daemon's components stop.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../config/index.js";
import type { DaemonAppServer } from "../../daemon/config/appserver.js";
import type { Daemon } from "../../daemon/daemon.js";
import { type Component, Part } from "../../daemon/lifecycle.js";
import { isoTime } from "../../iso-time.js";
import type { Logger } from "../../log.js";
import { APPSERVER_ENDPOINT_FILE } from "../../paths.js";
import { NEXO_VERSION } from "../../version.js";
import { FAMILIES } from "./families/index.js";
import { announceMcpStatus } from "./families/mcp.js";
import type { AppServerHost } from "./host.js";
import { createThreadedAppServer } from "./server.js";
import { listenWebSocket, type WebSocketListener } from "./websocket-listener.js";

/** How long stopping waits for cancelled turns to be persisted. */
const STOP_GRACE_MS = 1500;

export interface AppServerDoor {
  readonly host: AppServerHost;
  readonly listener: WebSocketListener;
  /** Stops the daemon-wide announcements (MCP server states) to this door's clients. */
  readonly unwatch: () => void;
}

export function appServerDoor(
  daemon: Daemon,
  settings: DaemonAppServer,
  logger: Logger,
): Part<AppServerDoor> & Component {
  return new Part<AppServerDoor>("appserver", {
    start: async () => {
      const agentId = settings.agent;
      const agent = agentId === undefined ? undefined : daemon.spec.agents.find((a) => a.id === agentId);
      if (agentId === undefined || agent === undefined) {
        throw new Error(`appserver.yaml: agent ${agentId ?? "(none)"} is not in agents.yaml`);
      }
      // Its threads open the daemon's sessions as they start, synchronously: the engine's session
      // code (loaded with the first session, daemon/sessions.ts) loads now.
      await daemon.sessions.loading();
      const host = createThreadedAppServer({
        version: NEXO_VERSION,
        workspace: agent.workspace,
        workspacePinned: true,
        logger,
        approvalTimeoutMs: settings.approvalTimeoutMs,
        agentId,
        // The daemon's store: the door uses it but leaves closing it to the daemon.
        openStore: () => Promise.resolve(daemon.store),
        closeStore: false,
        sessions: ({ record, toolLayers }) => daemon.sessions.openFor(agentId, record, toolLayers),
        // The management families act on the running daemon: its plugins, MCP servers and channels.
        management: { services: daemon.services, live: true, agent: agentId },
        // Channel adapter connections serve their channel kind through the daemon's registry.
        channels: daemon.channels,
        families: FAMILIES,
      });
      const listener = await listenWebSocket({ ...settings.websocket, server: host, logger });
      const unwatch = announceMcpStatus(host);
      await host.startChannelProcesses();
      logger.info({ url: listener.url, agent: agentId }, "AppServer listening");
      await publishEndpoint(daemon.spec.stateDir, listener.url, agentId);
      return { host, listener, unwatch };
    },
    stop: async ({ host, listener, unwatch }, reason) => {
      unwatch();
      rmSync(join(daemon.spec.stateDir, APPSERVER_ENDPOINT_FILE), { force: true });
      const closing = host.close(reason);
      await listener.close();
      await closing;
      await host.threads.shutdown(true, STOP_GRACE_MS);
    },
  });
}

/** Where local clients (`nexo chat --config DIR`) find this AppServer; the token is not written. */
async function publishEndpoint(stateDir: string, url: string, agent: string): Promise<void> {
  const endpoint = { url, pid: process.pid, agent, startedAt: isoTime() };
  await writeFileAtomic(join(stateDir, APPSERVER_ENDPOINT_FILE), `${JSON.stringify(endpoint)}\n`, {
    mode: 0o600,
  });
}
