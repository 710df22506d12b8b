/**
 * The MCP component: connects mcp.yaml's enabled servers at boot (each bounded by its startup
 * timeout; a server that fails is logged and reported, it does not stop the daemon) and keeps the
 * shared tool registry in step with their tools. A reload applies mcp.yaml's changes live: servers
 * removed or disabled are closed, new ones connected, changed ones reconnected.
 *
 * The MCP client library is loaded only once some server is configured: most daemons have none,
 * and loading it costs start-up time.
 */
import type { ToolRegistry } from "../../engine/tools/registry.js";
import type { McpConfig, McpServerConfig } from "../../extensions/mcp/config.js";
import type { McpManager, McpServerStatus } from "../../extensions/mcp/manager.js";
import type { Logger } from "../../log.js";
import type { Component } from "../lifecycle.js";

/** What a reload changed among the MCP servers, by name. */
export interface McpChanges {
  added: string[];
  removed: string[];
  /** Reconnected because their entry (or the file's default timeouts) changed. */
  changed: string[];
}

export class McpServers implements Component {
  readonly name = "mcp";
  private current: McpManager | undefined;
  private unsync: (() => void) | undefined;
  private config: McpConfig | undefined;
  private readonly watchers = new Set<(status: McpServerStatus) => void>();

  constructor(
    config: McpConfig | undefined,
    private readonly tools: ToolRegistry,
    private readonly hostEnv: NodeJS.ProcessEnv,
    private readonly logger: Logger,
  ) {
    this.config = config;
  }

  /** The manager, once some server was configured. */
  get manager(): McpManager | undefined {
    return this.current;
  }

  async start(): Promise<void> {
    const config = this.config;
    if (config === undefined || Object.keys(config.servers).length === 0) return;
    await (await this.ensureManager()).connectAll(config);
  }

  async stop(): Promise<void> {
    this.unsync?.();
    await this.current?.close();
  }

  statuses(): McpServerStatus[] {
    return this.current?.statuses() ?? [];
  }

  /** Calls `listener` on every state change of a server (connecting, connected, restarting, failed). */
  watch(listener: (status: McpServerStatus) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /** Applies a new mcp.yaml: closes, connects and reconnects what changed; waits for the connects. */
  async apply(next: McpConfig | undefined): Promise<McpChanges> {
    const before = this.config === undefined ? new Map() : enabledServers(this.config);
    const after = next === undefined ? new Map<string, McpServerConfig>() : enabledServers(next);
    this.config = next;
    const same = (name: string) => JSON.stringify(before.get(name)) === JSON.stringify(after.get(name));
    const changes: McpChanges = {
      added: [...after.keys()].filter((name) => !before.has(name)),
      removed: [...before.keys()].filter((name) => !after.has(name)),
      changed: [...after.keys()].filter((name) => before.has(name) && !same(name)),
    };
    if (changes.added.length + changes.removed.length + changes.changed.length === 0) return changes;
    const manager = await this.ensureManager();
    await Promise.all([...changes.removed, ...changes.changed].map((name) => manager.closeServer(name)));
    await Promise.all(
      [...changes.added, ...changes.changed].map((name) =>
        // A failure is logged by the manager and shows in the server's status.
        // The file's restart policy is folded into each entry (enabledServers), not a default.
        manager.connect(name, after.get(name)!, { restart: {} }).catch(() => undefined),
      ),
    );
    return changes;
  }

  private async ensureManager(): Promise<McpManager> {
    if (this.current === undefined) {
      const { McpManager: Manager, syncMcpTools } = await import("../../extensions/mcp/index.js");
      this.current = new Manager({ logger: this.logger, hostEnv: this.hostEnv });
      this.unsync = syncMcpTools(this.current, this.tools);
      // The manager is created lazily, so watchers subscribe here rather than to it directly.
      this.current.on("serverState", (status) => {
        for (const watcher of this.watchers) watcher(status);
      });
    }
    return this.current;
  }
}

/**
 * The enabled servers with the file's defaults (timeouts, a stdio server's restart policy) folded
 * in, so a changed default counts as a change of every server that relies on it.
 */
function enabledServers(config: McpConfig): Map<string, McpServerConfig> {
  const servers = new Map<string, McpServerConfig>();
  for (const [name, server] of Object.entries(config.servers)) {
    if (!server.enabled) continue;
    const timeouts = {
      startup_timeout_ms: server.startup_timeout_ms ?? config.startup_timeout_ms,
      call_timeout_ms: server.call_timeout_ms ?? config.call_timeout_ms,
    };
    if (server.transport === "stdio" && (config.restart !== undefined || server.restart !== undefined)) {
      servers.set(name, { ...server, ...timeouts, restart: { ...config.restart, ...server.restart } });
    } else servers.set(name, { ...server, ...timeouts });
  }
  return servers;
}
