/**
 * Assembles an AppServer: the host with every listed method family served on each connection, and
 * its threads over a store and a source of engine sessions. Listeners (stdio in the CLI,
 * websocket-listener.ts) hand it their transports. `nexo app-server` and the daemon's door
 * (daemon-door.ts) both build theirs here.
 */

import type { Logger } from "../../log.js";
import type { Store } from "../../store/index.js";
import { configureThread, type SessionSource } from "./agent.js";
import { familyCapabilities, type MethodFamily, serveFamily } from "./family.js";
import { AppServerHost, type AppServerHostOptions } from "./host.js";
import { ThreadService } from "./threads/service.js";

export interface AppServerOptions extends Omit<AppServerHostOptions, "serve" | "capabilities" | "logger"> {
  logger: Logger;
  /**
   * The families served: every family of families/index.ts where management services are given,
   * families/core.ts's where they are not (not imported here, so a server without them never loads
   * the management families).
   */
  families: readonly MethodFamily[];
}

export function createAppServer(options: AppServerOptions): AppServerHost {
  const { families } = options;
  const host: AppServerHost = new AppServerHost({
    ...options,
    serve: (connection) => {
      for (const family of families) serveFamily(family, connection, host);
    },
    capabilities: () => familyCapabilities(families, host),
  });
  return host;
}

export interface ThreadedAppServerOptions extends Omit<AppServerOptions, "threads"> {
  approvalTimeoutMs: number;
  /** The agent id threads are filed under. */
  agentId?: string;
  /** Opened on first use, so `initialize` never waits for a database. */
  openStore: () => Promise<Store>;
  /** Whether shutting the threads down closes the store; false for a borrowed one. Default true. */
  closeStore?: boolean;
  /** Where a thread's engine session comes from. */
  sessions: SessionSource;
}

/** An AppServer whose threads are sessions of `openStore`'s store, run by `sessions`' agents. */
export function createThreadedAppServer(options: ThreadedAppServerOptions): AppServerHost {
  const { approvalTimeoutMs, agentId, openStore, closeStore, sessions, ...rest } = options;
  let host: AppServerHost | undefined;
  const threads = new ThreadService({
    workspace: options.workspace,
    workspacePinned: options.workspacePinned,
    logger: options.logger,
    approvalTimeoutMs,
    ...(agentId === undefined ? {} : { agentId }),
    openStore,
    ...(closeStore === undefined ? {} : { closeStore }),
    openSession: async (request) => sessions(request),
    configure: configureThread,
    onRuntimeChanged: (threadId, runtime) => host?.broadcast("thread/runtimeChanged", { threadId, runtime }),
    // A sub-agent's child thread: the spawning turn's audience sees it start; everyone sees the tree change.
    onChildThread: (parentThreadId, child, send) => {
      send("thread/started", { thread: child });
      host?.broadcast("subagent/graphChanged", { parentThreadId, childThreadId: child.id });
    },
    adapterFor: (channel) => host?.channelAdapters.get(channel),
  });
  host = createAppServer({ ...rest, threads });
  return host;
}
