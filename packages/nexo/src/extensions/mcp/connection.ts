/**
 * One live MCP server: its transport, its SDK client, the tools it offers, and what happened to it.
 *
 * `McpConnection.open` either returns a connection whose handshake and first tool listing both
 * succeeded within the startup timeout, or throws an `McpConnectError` saying which step failed
 * and why, in words an operator can act on (a missing command, an exit code with the server's last
 * stderr lines, a refused HTTP connection, a timeout). Nothing is ever left running after a failure.
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type Tool as SdkTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { NEXO_VERSION } from "../../version.js";
import type { McpServerConfig } from "./config.js";
import { McpConnectError, McpNotConnectedError } from "./errors.js";
import { type ConnectPhase, callFailure, connectFailure, describeError, lossReason } from "./failures.js";
import { namespaceTools } from "./naming.js";
import { StdioProcessTransport, stdioServerEnv } from "./stdio-transport.js";

/** The subset of pino's API the MCP client logs through (pino loggers fit as they are). */
export interface McpLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** One tool as the engine will name it, with what the server said about it. */
export interface McpToolEntry {
  /** `mcp__<server>__<tool>`. */
  readonly name: string;
  /** The name the server knows it by. */
  readonly tool: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

export interface McpConnectionOptions {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly startupTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly logger: McpLogger;
  /** Where a relative stdio `cwd` starts. */
  readonly configDir?: string;
  /** The daemon environment PATH/HOME/LANG are read from. Default `process.env`. */
  readonly hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Grace periods of the stdio shutdown sequence. */
  readonly closeGraceMs?: number;
  /** Aborting gives up a connection attempt that is still in progress (the manager is closing). */
  readonly signal?: AbortSignal;
  /** The tool list changed after a `notifications/tools/list_changed`. */
  readonly onToolsChanged?: () => void;
  /** The server went away after it had connected (it exited, or its connection closed). */
  readonly onLost?: (reason: string) => void;
}

/** Guards against a server whose `nextCursor` never ends. */
const MAX_TOOL_PAGES = 100;
/** Ending an HTTP session is a courtesy; it must not hold up shutdown. */
const HTTP_TERMINATE_TIMEOUT_MS = 1000;

type State = "connecting" | "connected" | "lost" | "closed";

export class McpConnection {
  private state: State = "connecting";
  private entries = new Map<string, McpToolEntry>();
  private goneReason: string | undefined;
  private refreshing = false;
  private refreshAgain = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly options: McpConnectionOptions,
    private readonly client: Client,
    private readonly transport: Transport,
  ) {}

  /** Starts or reaches the server, runs the MCP handshake and lists its tools; throws `McpConnectError`. */
  static async open(options: McpConnectionOptions): Promise<McpConnection> {
    const { name, config, logger } = options;
    const transport = createTransport(options);
    const client = new Client({ name: "nexo", version: NEXO_VERSION }, { capabilities: {} });
    const connection = new McpConnection(options, client, transport);
    client.onclose = () => connection.handleClose();
    client.onerror = (error) => logger.debug({ mcp_server: name, err: error.message }, "MCP transport error");
    // Registered before the handshake: a change announced while we are still listing is not lost.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => connection.refresh());

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.startupTimeoutMs);
    const abort =
      options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]);
    let phase: ConnectPhase = config.transport === "stdio" ? "spawn" : "handshake";
    try {
      if (config.transport === "stdio" && config.cwd !== undefined && !existsSync(resolvedCwd(options))) {
        throw new McpConnectError(name, "spawn", `working directory ${resolvedCwd(options)} does not exist`);
      }
      if (transport instanceof StdioProcessTransport) {
        // Spawning first tells "command not found" apart from a server that started and then failed;
        // the start() inside Client.connect then returns this same, settled attempt.
        await untilAborted(transport.start(), abort);
        phase = "handshake";
      }
      await untilAborted(
        client.connect(transport, { signal: abort, timeout: options.startupTimeoutMs }),
        abort,
      );
      phase = "list_tools";
      const tools = client.getServerCapabilities()?.tools
        ? await untilAborted(listAllTools(client, abort, options.startupTimeoutMs), abort)
        : [];
      connection.setTools(tools);
      connection.state = "connected";
    } catch (error) {
      connection.state = "closed";
      await connection.shutdown();
      if (error instanceof McpConnectError) throw error;
      throw connectFailure(
        {
          name,
          config,
          startupTimeoutMs: options.startupTimeoutMs,
          transport,
          phase,
          timedOut: deadline.signal.aborted,
          cancelled: options.signal?.aborted === true,
        },
        error,
      );
    } finally {
      clearTimeout(timer);
    }
    // A list_changed that arrived while the first listing ran is honoured now.
    if (connection.refreshAgain) connection.refresh();
    return connection;
  }

  /** The stdio server's pid (its process group), for diagnostics and tests. */
  get pid(): number | undefined {
    return this.transport instanceof StdioProcessTransport ? this.transport.pid : undefined;
  }

  tools(): McpToolEntry[] {
    return [...this.entries.values()];
  }

  /**
   * Calls a tool by its server-side name. Throws `McpNotConnectedError` when the server is gone
   * (before or during the call) and `McpCallError` when it timed out, was cancelled or refused.
   */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const server = this.options.name;
    if (this.state !== "connected")
      throw new McpNotConnectedError(server, this.goneReason ?? "it was closed");
    const timeout = this.options.callTimeoutMs;
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout,
        ...(signal === undefined ? {} : { signal }),
      });
      return result as CallToolResult;
    } catch (error) {
      if (this.state !== "connected" && !signal?.aborted) {
        // The server went away during the call: say so, with the reason, rather than "closed".
        throw new McpNotConnectedError(server, this.goneReason ?? "it was closed");
      }
      throw callFailure({ server, tool, timeoutMs: timeout, cancelled: signal?.aborted === true }, error);
    }
  }

  /** Closes the client and stops the server (and everything it started); safe to call twice. */
  close(): Promise<void> {
    if (this.state === "connected" || this.state === "connecting") this.state = "closed";
    return this.shutdown();
  }

  private shutdown(): Promise<void> {
    this.closing ??= (async () => {
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId !== undefined) {
        await untilAborted(
          this.transport.terminateSession(),
          AbortSignal.timeout(HTTP_TERMINATE_TIMEOUT_MS),
        ).catch(() => undefined);
      }
      await this.client.close().catch(() => undefined);
      // The SDK forgets the transport once it has closed by itself, so close it directly as well.
      await this.transport.close().catch(() => undefined);
    })();
    return this.closing;
  }

  private handleClose(): void {
    if (this.state !== "connected") return;
    this.state = "lost";
    this.goneReason = lossReason(this.transport);
    this.options.logger.error(
      { mcp_server: this.options.name, reason: this.goneReason },
      "MCP server went away",
    );
    // Whatever the server left behind in its process group goes too.
    void this.shutdown();
    this.options.onLost?.(this.goneReason);
  }

  /** Re-lists the tools after a list_changed; concurrent notifications collapse into one more pass. */
  private refresh(): void {
    if (this.state === "connecting" || this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    if (this.state !== "connected") return;
    this.refreshing = true;
    void (async () => {
      try {
        do {
          this.refreshAgain = false;
          const tools = await listAllTools(this.client, undefined, this.options.callTimeoutMs);
          if (this.state !== "connected") return;
          this.setTools(tools);
          this.options.logger.info(
            { mcp_server: this.options.name, tools: [...this.entries.keys()] },
            "MCP server changed its tools",
          );
          this.options.onToolsChanged?.();
        } while (this.refreshAgain);
      } catch (error) {
        this.options.logger.warn(
          { mcp_server: this.options.name, err: describeError(error) },
          "MCP server announced new tools but listing them failed; keeping the previous list",
        );
      } finally {
        this.refreshing = false;
      }
    })();
  }

  private setTools(tools: readonly SdkTool[]): void {
    const { name: server, logger } = this.options;
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const { names, skipped } = namespaceTools(server, [...byName.keys()]);
    if (skipped.length > 0) {
      logger.warn(
        { mcp_server: server, tools: skipped },
        "MCP tools left out: no unique name could be made for them",
      );
    }
    const entries = new Map<string, McpToolEntry>();
    for (const [name, original] of names) {
      const tool = byName.get(original);
      if (tool === undefined) continue;
      entries.set(name, {
        name,
        tool: original,
        description: tool.description ?? tool.title ?? `Tool ${original} of MCP server ${server}`,
        inputSchema: { ...tool.inputSchema },
      });
    }
    this.entries = entries;
  }
}

function createTransport(options: McpConnectionOptions): Transport {
  const { config, name, logger } = options;
  if (config.transport === "streamable_http") {
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
    });
  }
  return new StdioProcessTransport({
    command: config.command,
    args: config.args,
    env: stdioServerEnv(config.env, options.hostEnv),
    ...(config.cwd === undefined ? {} : { cwd: resolvedCwd(options) }),
    ...(options.closeGraceMs === undefined ? {} : { closeGraceMs: options.closeGraceMs }),
    onStderrLine: (line) => logger.debug({ mcp_server: name, stderr: line }, "MCP server stderr"),
  });
}

function resolvedCwd(options: McpConnectionOptions): string {
  const cwd = options.config.transport === "stdio" ? (options.config.cwd ?? ".") : ".";
  return isAbsolute(cwd) ? cwd : resolve(options.configDir ?? process.cwd(), cwd);
}

async function listAllTools(
  client: Client,
  signal: AbortSignal | undefined,
  timeout: number,
): Promise<SdkTool[]> {
  const tools: SdkTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
      timeout,
      ...(signal === undefined ? {} : { signal }),
    });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error(`the server kept paginating its tool list past ${MAX_TOOL_PAGES} pages`);
}

/** Settles like `promise`, or rejects as soon as `signal` aborts (for steps that ignore signals). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
