/**
 * The MCP client side of nexo: every configured server, its state, and its tools as engine tools.
 *
 * Failure is always visible. `connectAll` returns one status per enabled server and logs each
 * failure with its reason; `connect` (the json-stream `add_mcp_server` path) throws a typed error;
 * a server that dies later is reported through `serverState` and its tools keep answering, with
 * "MCP server X is not connected" and the reason, instead of vanishing from under the model.
 *
 * Events (for the tool registry and the doors):
 * - `toolsChanged(server)`: the set of tools `tools()` returns for that server changed (it
 *   connected, announced `notifications/tools/list_changed`, or was closed): re-sync.
 * - `serverState(status)`: a server started connecting, connected, failed, or went away.
 */
import { EventEmitter } from "node:events";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { formatIssue } from "../../config/errors.js";
import { validateWithSchema } from "../../config/schema-issues.js";
import type { Tool } from "../../engine/types.js";
import { createLogger } from "../../log.js";
import type { ProcessGroupRegistry } from "../../process/registry.js";
import { restartOverrides } from "../restart-config.js";
import type { RestartPolicy } from "../restart-policy.js";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  type McpConfig,
  type McpConfigInput,
  McpConfigSchema,
  type McpServerConfig,
  type McpServerConfigInput,
  McpServerConfigSchema,
  type McpTransportKind,
  serverNameProblem,
} from "./config.js";
import { McpConnection, type McpLogger } from "./connection.js";
import {
  McpConfigError,
  McpConnectError,
  McpManagerClosedError,
  McpNotConnectedError,
  McpServerExistsError,
} from "./errors.js";
import { createMcpTool, type McpToolCaller } from "./mcp-tool.js";

/**
 * `restarting`: a stdio server that had connected crashed and waits for, or is in, its restart
 * (its tools answer with the reason meanwhile); it becomes `connected` again or, when the restart
 * policy gives up, `failed`.
 */
export type McpServerState = "connecting" | "connected" | "restarting" | "failed";

export interface McpServerStatus {
  name: string;
  transport: McpTransportKind;
  state: McpServerState;
  /** Namespaced tool names (`mcp__<server>__<tool>`); a server that died keeps its last list. */
  tools: string[];
  /** Why the server failed or went away (or, while `restarting`, why it is being restarted). */
  error?: string;
}

export interface McpManagerOptions {
  /** pino or anything with the same four methods. Default: nexo's stderr logger. */
  logger?: McpLogger;
  /** Where relative stdio `cwd` paths start (the directory of mcp.yaml). Default: the process cwd. */
  configDir?: string;
  /** The daemon environment a stdio server's base variables are taken from. Default `process.env`. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Grace periods of the stdio shutdown sequence (stdin closed → SIGTERM → SIGKILL). */
  closeGraceMs?: number;
  /** Where stdio servers' processes are registered (the reaper's registry); default the daemon-wide one. */
  registry?: ProcessGroupRegistry;
}

/** Per-server timeouts and restart policy for `connect`, when the server config does not set its own. */
export interface McpConnectDefaults {
  startupTimeoutMs?: number;
  callTimeoutMs?: number;
  restart?: Partial<RestartPolicy>;
}

export interface McpManagerEvents {
  toolsChanged: [server: string];
  serverState: [status: McpServerStatus];
}

interface Slot {
  readonly name: string;
  readonly config: McpServerConfig;
  state: McpServerState;
  error?: string;
  connection?: McpConnection;
  /** Aborted to give up the attempt while still connecting. */
  attempt?: AbortController;
  /** Settles once the connection attempt has finished, whatever its outcome. */
  settled?: Promise<void>;
}

export class McpManager extends EventEmitter<McpManagerEvents> implements McpToolCaller {
  private readonly slots = new Map<string, Slot>();
  private readonly logger: McpLogger;
  private defaults: Required<McpConnectDefaults> = {
    startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
    callTimeoutMs: DEFAULT_CALL_TIMEOUT_MS,
    restart: {},
  };
  private closed = false;

  constructor(private readonly options: McpManagerOptions = {}) {
    super();
    this.logger = options.logger ?? createLogger({ base: { component: "mcp" } });
  }

  /**
   * Connects every enabled server of mcp.yaml at once, each bounded by its startup timeout. Never
   * rejects for a server's sake: each failure is logged and comes back as a `failed` status.
   * Throws `McpConfigError` when the config itself is invalid. Servers that are already connected
   * keep their connection and report their current status.
   */
  async connectAll(config: McpConfigInput): Promise<McpServerStatus[]> {
    const parsed = parseOrThrow(McpConfigSchema, config, undefined) as McpConfig;
    this.defaults = {
      startupTimeoutMs: parsed.startup_timeout_ms,
      callTimeoutMs: parsed.call_timeout_ms,
      restart: restartOverrides(parsed.restart),
    };
    const enabled: [string, McpServerConfig][] = [];
    for (const [name, server] of Object.entries(parsed.servers)) {
      if (server.enabled) enabled.push([name, server]);
      else this.logger.info({ mcp_server: name }, "MCP server is disabled in mcp.yaml; not started");
    }
    return Promise.all(
      enabled.map(async ([name, server]) => {
        const existing = this.slots.get(name);
        if (existing !== undefined && existing.state !== "failed") {
          this.logger.warn({ mcp_server: name }, "MCP server is already connected; keeping that connection");
          return statusOf(existing);
        }
        try {
          return await this.open(name, server, {});
        } catch {
          // open() recorded and logged the failure; the status says it.
          return this.status(name) ?? failedStatus(name, server, "the MCP manager was closed");
        }
      }),
    );
  }

  /**
   * Connects one server (json-stream's `add_mcp_server`, or an operator adding one at runtime).
   * A server that failed earlier may be connected again under its name. Throws `McpConfigError`,
   * `McpServerExistsError`, `McpConnectError` or `McpManagerClosedError`.
   */
  async connect(
    name: string,
    serverConfig: McpServerConfigInput,
    defaults: McpConnectDefaults = {},
  ): Promise<McpServerStatus> {
    const problem = serverNameProblem(name);
    if (problem !== undefined) throw new McpConfigError(name, [`server name ${problem}`]);
    const config = parseOrThrow(McpServerConfigSchema, serverConfig, name) as McpServerConfig;
    return this.open(name, config, defaults);
  }

  /** Every server the manager knows, in the order they were first connected. */
  statuses(): McpServerStatus[] {
    return [...this.slots.values()].map(statusOf);
  }

  status(name: string): McpServerStatus | undefined {
    const slot = this.slots.get(name);
    return slot === undefined ? undefined : statusOf(slot);
  }

  /**
   * The engine tools of every server that connected (or of `server` alone). Tools of a server that
   * died are still listed: calling them says the server is not connected, and why.
   */
  tools(server?: string): Tool[] {
    const tools: Tool[] = [];
    for (const slot of this.slots.values()) {
      if (server !== undefined && slot.name !== server) continue;
      for (const entry of slot.connection?.tools() ?? []) tools.push(createMcpTool(slot.name, entry, this));
    }
    return tools;
  }

  /** The pid of a stdio server's process (and its process group), while it runs. */
  pidOf(server: string): number | undefined {
    return this.slots.get(server)?.connection?.pid;
  }

  /** Calls `tool` (its server-side name) on `server`. Throws `McpNotConnectedError` or `McpCallError`. */
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const slot = this.slots.get(server);
    if (slot?.connection === undefined) {
      const detail =
        slot === undefined ? "no server of that name is configured" : (slot.error ?? "it is still starting");
      return Promise.reject(new McpNotConnectedError(server, detail));
    }
    return slot.connection.call(tool, args, signal);
  }

  /** Disconnects one server and forgets it; false when there was none of that name. */
  async closeServer(name: string): Promise<boolean> {
    const slot = this.slots.get(name);
    if (slot === undefined) return false;
    this.slots.delete(name);
    await this.stop(slot);
    return true;
  }

  /** Disconnects every server, stops every stdio server process group, and refuses new connections. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(slots.map((slot) => this.stop(slot)));
  }

  private async open(
    name: string,
    config: McpServerConfig,
    defaults: McpConnectDefaults,
  ): Promise<McpServerStatus> {
    if (this.closed) throw new McpManagerClosedError(name);
    const existing = this.slots.get(name);
    if (existing !== undefined && existing.state !== "failed") throw new McpServerExistsError(name);
    // The new slot takes the name at once, so a second connect of the same name is refused meanwhile.
    const slot: Slot = { name, config, state: "connecting", attempt: new AbortController() };
    this.slots.set(name, slot);
    const run = this.runOpen(slot, existing?.connection, defaults);
    slot.settled = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async runOpen(
    slot: Slot,
    previous: McpConnection | undefined,
    defaults: McpConnectDefaults,
  ): Promise<McpServerStatus> {
    const { name, config } = slot;
    await previous?.close();
    this.announce("serverState", statusOf(slot));
    const target = describeTarget(config);
    this.logger.info({ mcp_server: name, transport: config.transport, target }, "connecting MCP server");

    let connection: McpConnection;
    try {
      connection = await McpConnection.open({
        name,
        config,
        startupTimeoutMs:
          config.startup_timeout_ms ?? defaults.startupTimeoutMs ?? this.defaults.startupTimeoutMs,
        callTimeoutMs: config.call_timeout_ms ?? defaults.callTimeoutMs ?? this.defaults.callTimeoutMs,
        restart: {
          ...(defaults.restart ?? this.defaults.restart),
          ...(config.transport === "stdio" ? restartOverrides(config.restart) : {}),
        },
        logger: this.logger,
        ...(slot.attempt === undefined ? {} : { signal: slot.attempt.signal }),
        ...(this.options.configDir === undefined ? {} : { configDir: this.options.configDir }),
        ...(this.options.hostEnv === undefined ? {} : { hostEnv: this.options.hostEnv }),
        ...(this.options.closeGraceMs === undefined ? {} : { closeGraceMs: this.options.closeGraceMs }),
        ...(this.options.registry === undefined ? {} : { registry: this.options.registry }),
        onToolsChanged: () => this.announce("toolsChanged", name),
        onRestarting: (reason) => this.setState(slot, "restarting", reason),
        onRestored: () => this.setState(slot, "connected"),
        onLost: (reason) => this.setState(slot, "failed", reason),
      });
    } catch (error) {
      const failure = error instanceof McpConnectError ? error.failure : undefined;
      const reason = error instanceof McpConnectError ? error.reason : String(error);
      // Giving up an attempt at shutdown is expected, not an operator's problem.
      const level = failure === "cancelled" ? "info" : "error";
      this.logger[level](
        { mcp_server: name, transport: config.transport, target, ...(failure ? { failure } : {}), reason },
        "MCP server failed to connect",
      );
      slot.attempt = undefined;
      if (this.slots.get(name) === slot) {
        slot.state = "failed";
        slot.error = reason;
        this.announce("serverState", statusOf(slot));
      }
      throw error;
    }

    slot.attempt = undefined;
    if (this.slots.get(name) !== slot) {
      // closeServer() or close() ran just as the connection succeeded.
      await connection.close();
      throw new McpConnectError(name, "cancelled", "the server was closed while it was connecting");
    }
    slot.connection = connection;
    slot.state = "connected";
    const status = statusOf(slot);
    this.logger.info({ mcp_server: name, tools: status.tools }, "MCP server connected");
    this.announce("serverState", status);
    this.announce("toolsChanged", name);
    return status;
  }

  /** A live server's state changed (restart, restored, gone); stale slots are ignored. */
  private setState(slot: Slot, state: McpServerState, reason?: string): void {
    if (this.slots.get(slot.name) !== slot) return;
    slot.state = state;
    if (reason === undefined) delete slot.error;
    else slot.error = reason;
    this.announce("serverState", statusOf(slot));
  }

  private async stop(slot: Slot): Promise<void> {
    slot.attempt?.abort();
    // An attempt in progress cleans up after itself; wait for it, so nothing outlives close().
    await slot.settled;
    const hadTools = (slot.connection?.tools().length ?? 0) > 0;
    await slot.connection?.close();
    if (hadTools) this.announce("toolsChanged", slot.name);
  }

  /** A listener's exception must not break the connection bookkeeping that triggered it. */
  private announce<K extends keyof McpManagerEvents>(event: K, ...args: McpManagerEvents[K]): void {
    try {
      (this.emit as (event: K, ...args: McpManagerEvents[K]) => boolean)(event, ...args);
    } catch (error) {
      this.logger.error(
        { event, err: error instanceof Error ? error.message : String(error) },
        "an MCP event listener threw",
      );
    }
  }
}

function statusOf(slot: Slot): McpServerStatus {
  return {
    name: slot.name,
    transport: slot.config.transport,
    state: slot.state,
    tools: slot.connection?.tools().map((tool) => tool.name) ?? [],
    ...(slot.error === undefined || (slot.state !== "failed" && slot.state !== "restarting")
      ? {}
      : { error: slot.error }),
  };
}

function failedStatus(name: string, config: McpServerConfig, error: string): McpServerStatus {
  return { name, transport: config.transport, state: "failed", tools: [], error };
}

/** Where a server is, for logs: the command, or the URL without query or credentials (tokens live there). */
function describeTarget(config: McpServerConfig): string {
  if (config.transport === "stdio") return config.command;
  const url = new URL(config.url);
  return `${url.origin}${url.pathname}`;
}

function parseOrThrow(schema: z.ZodType, value: unknown, server: string | undefined): unknown {
  const result = validateWithSchema(schema, value);
  if (result.ok) return result.value;
  throw new McpConfigError(server, result.issues.map(formatIssue));
}
