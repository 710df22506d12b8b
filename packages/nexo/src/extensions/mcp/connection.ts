/**
 * One live MCP server: its SDK client, the tools it offers, and what happened to it.
 *
 * `McpConnection.open` either returns a connection whose handshake and first tool listing both
 * succeeded within the startup timeout, or throws an `McpConnectError` saying which step failed
 * and why, in words an operator can act on (a missing command, an exit code with the server's last
 * stderr lines, a refused HTTP connection, a timeout). Nothing is ever left running after a failure.
 *
 * A stdio server runs under the extension supervisor (stdio-server.ts): after a crash it is
 * restarted under the restart policy and gets a new client; meanwhile its tools say it is
 * restarting. An HTTP server whose session expired (it answers 404 to the session id) gets a new
 * session, once per call, and the call is sent again.
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError as SdkMcpError,
  type Tool as SdkTool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ProcessGroupRegistry } from "../../process/registry.js";
import { NEXO_VERSION } from "../../version.js";
import { settlesWithin, untilAborted } from "../bounded-wait.js";
import type { RestartPolicy } from "../restart-policy.js";
import type { McpServerConfig } from "./config.js";
import { McpConnectError, McpNotConnectedError } from "./errors.js";
import {
  type ConnectPhase,
  callFailure,
  connectFailure,
  describeError,
  isSessionExpired,
  lossReason,
} from "./failures.js";
import { StdioServer } from "./stdio-server.js";
import { stdioSpawnSpec } from "./stdio-transport.js";
import { listAllTools, type McpToolEntry, toolEntries } from "./tool-list.js";

/** The subset of pino's API the MCP client logs through (pino loggers fit as they are). */
export interface McpLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface McpConnectionOptions {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly startupTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly logger: McpLogger;
  /** Where a relative stdio `cwd` starts. */
  readonly configDir?: string;
  /** The daemon environment a stdio server's base variables are read from. Default `process.env`. */
  readonly hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Grace periods of the stdio shutdown sequence. */
  readonly closeGraceMs?: number;
  /** When a stdio server that crashed is started again (the supervisor's defaults otherwise). */
  readonly restart?: Partial<RestartPolicy>;
  /** Where a stdio server's processes are registered; default the daemon-wide registry. */
  readonly registry?: ProcessGroupRegistry;
  /** Aborting gives up a connection attempt that is still in progress (the manager is closing). */
  readonly signal?: AbortSignal;
  /** The tool list changed after a `notifications/tools/list_changed`, a restart or a new session. */
  readonly onToolsChanged?: () => void;
  /** A stdio server crashed and is being restarted; its tools answer with `reason` meanwhile. */
  readonly onRestarting?: (reason: string) => void;
  /** A restarted stdio server is connected again. */
  readonly onRestored?: () => void;
  /** The server went away for good after it had connected. */
  readonly onLost?: (reason: string) => void;
}

/** Ending an HTTP session is a courtesy; it must not hold up shutdown. */
const HTTP_TERMINATE_TIMEOUT_MS = 1000;
/** How long a call that lost its stdio server waits for the supervisor to say what happened. */
const CRASH_VERDICT_WAIT_MS = 5000;

type State = "connecting" | "connected" | "restarting" | "lost" | "closed";

export class McpConnection {
  private state: State = "connecting";
  private entries = new Map<string, McpToolEntry>();
  private goneReason: string | undefined;
  private refreshing = false;
  private refreshAgain = false;
  private closing: Promise<void> | undefined;
  /** The client of the current process (stdio) or session (HTTP). */
  private client: Client | undefined;
  private httpTransport: StreamableHTTPClientTransport | undefined;
  private stdio: StdioServer | undefined;
  private phase: ConnectPhase = "handshake";
  private renewing: Promise<void> | undefined;

  private constructor(private readonly options: McpConnectionOptions) {}

  /** Starts or reaches the server, runs the MCP handshake and lists its tools; throws `McpConnectError`. */
  static async open(options: McpConnectionOptions): Promise<McpConnection> {
    const { name, config } = options;
    const connection = new McpConnection(options);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.startupTimeoutMs);
    const abort =
      options.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, options.signal]);
    try {
      if (config.transport === "stdio") await connection.startStdio(abort);
      else await untilAborted(connection.openHttpSession(abort), abort);
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
          process: connection.stdio,
          phase: connection.phase,
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

  /** The stdio server's pid (its process group), while it runs; for diagnostics and tests. */
  get pid(): number | undefined {
    return this.stdio?.pid;
  }

  tools(): McpToolEntry[] {
    return [...this.entries.values()];
  }

  /**
   * Calls a tool by its server-side name. Throws `McpNotConnectedError` when the server is gone
   * or restarting (before or during the call) and `McpCallError` when it timed out, was cancelled
   * or refused. A call an HTTP server refuses because its session expired is sent once more, in
   * a new session.
   */
  async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    const server = this.options.name;
    const client = this.client;
    if (this.state !== "connected" || client === undefined)
      throw new McpNotConnectedError(server, this.goneReason ?? "it was closed");
    const process = this.stdio?.incarnation;
    try {
      return await this.callWith(client, tool, args, signal);
    } catch (error) {
      if (process !== undefined && !signal?.aborted && isSdkError(error, ErrorCode.ConnectionClosed)) {
        // The server's stdout closed under the call: give the supervisor the moment it needs to
        // see the exit, so the answer says "restarting" or "gone" with the reason.
        await settlesWithin(process.exited, CRASH_VERDICT_WAIT_MS);
      }
      if (this.state !== "connected" && !signal?.aborted) {
        // The server went away during the call: say so, with the reason, rather than "closed".
        throw new McpNotConnectedError(server, this.goneReason ?? "it was closed");
      }
      if (this.httpTransport !== undefined && isSessionExpired(error) && !signal?.aborted) {
        await this.renewSession(client);
        const renewed = this.client;
        if (renewed === undefined || this.state !== "connected")
          throw new McpNotConnectedError(server, this.goneReason ?? "it was closed");
        try {
          return await this.callWith(renewed, tool, args, signal);
        } catch (retryError) {
          throw this.callError(tool, retryError, signal);
        }
      }
      throw this.callError(tool, error, signal);
    }
  }

  /** Closes the client and stops the server (and everything it started); safe to call twice. */
  close(): Promise<void> {
    if (this.state !== "lost") this.state = "closed";
    return this.shutdown();
  }

  private async callWith(
    client: Client,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<CallToolResult> {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, {
      timeout: this.options.callTimeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
    return result as CallToolResult;
  }

  private callError(tool: string, error: unknown, signal: AbortSignal | undefined): Error {
    const call = {
      server: this.options.name,
      tool,
      timeoutMs: this.options.callTimeoutMs,
      cancelled: signal?.aborted === true,
    };
    return callFailure(call, error);
  }

  // --- stdio ---------------------------------------------------------------------------------------

  private async startStdio(abort: AbortSignal): Promise<void> {
    const { name, config, options } = {
      name: this.options.name,
      config: this.options.config,
      options: this.options,
    };
    if (config.transport !== "stdio") throw new Error("not a stdio server");
    this.phase = "spawn";
    const cwd = config.cwd === undefined ? undefined : resolvedCwd(options);
    if (cwd !== undefined && !existsSync(cwd)) {
      throw new McpConnectError(name, "spawn", `working directory ${cwd} does not exist`);
    }
    const spec = stdioSpawnSpec(config, {
      ...(cwd === undefined ? {} : { cwd }),
      ...(options.hostEnv === undefined ? {} : { hostEnv: options.hostEnv }),
    });
    this.phase = "handshake";
    const stdio = new StdioServer({
      name,
      spec,
      restart: options.restart ?? {},
      startupTimeoutMs: options.startupTimeoutMs,
      logger: options.logger,
      ...(options.closeGraceMs === undefined ? {} : { closeGraceMs: options.closeGraceMs }),
      ...(options.registry === undefined ? {} : { registry: options.registry }),
      handshake: (transport, processGone, first) =>
        this.handshake(
          transport,
          AbortSignal.any([processGone, first ? abort : AbortSignal.timeout(options.startupTimeoutMs)]),
          first,
        ),
      onRestarting: (reason, delayMs) => this.restarting(reason, delayMs),
      onRestored: () => this.restored(),
      onFailed: (reason) => this.lost(lossReason(reason, stdio)),
    });
    this.stdio = stdio;
    await untilAborted(stdio.start(), abort);
  }

  private restarting(reason: string, delayMs: number): void {
    if (this.state !== "connected") return;
    this.state = "restarting";
    this.goneReason = lossReason(`${reason}; restarting in ${delayMs} ms`, this.stdio!);
    this.options.logger.warn(
      { mcp_server: this.options.name, reason: this.goneReason },
      "MCP server went away; restarting it",
    );
    this.options.onRestarting?.(this.goneReason);
  }

  private restored(): void {
    if (this.state !== "restarting") return;
    this.state = "connected";
    this.goneReason = undefined;
    this.options.logger.info(
      { mcp_server: this.options.name, pid: this.stdio?.pid, tools: [...this.entries.keys()] },
      "MCP server restarted and connected",
    );
    this.options.onRestored?.();
    this.options.onToolsChanged?.();
  }

  // --- HTTP ----------------------------------------------------------------------------------------

  /** A new Streamable HTTP session: its own transport and client, handshake, tool listing. */
  private async openHttpSession(signal: AbortSignal): Promise<void> {
    const { config } = this.options;
    if (config.transport !== "streamable_http") throw new Error("not an HTTP server");
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers },
    });
    await this.handshake(transport, signal, this.httpTransport === undefined);
    const previous = this.httpTransport;
    this.httpTransport = transport;
    // The old session is gone on the server's side; only our end of it is left to close.
    await previous?.close().catch(() => undefined);
  }

  /** The server no longer knows our session: start a new one (calls that hit this share it). */
  private renewSession(expired: Client): Promise<void> {
    if (this.client !== expired) return this.renewing ?? Promise.resolve();
    this.renewing ??= (async () => {
      const server = this.options.name;
      this.options.logger.info({ mcp_server: server }, "MCP session expired; starting a new one");
      try {
        await this.openHttpSession(AbortSignal.timeout(this.options.startupTimeoutMs));
      } catch (error) {
        this.options.logger.error(
          { mcp_server: server, err: describeError(error) },
          "MCP session expired and a new one could not be started",
        );
        throw new McpNotConnectedError(
          server,
          `its session expired and a new one could not be started: ${describeError(error)}`,
        );
      } finally {
        this.renewing = undefined;
      }
    })();
    return this.renewing;
  }

  // --- shared --------------------------------------------------------------------------------------

  /** Runs the MCP handshake and the tool listing on `transport`; the new client becomes current. */
  private async handshake(transport: Transport, signal: AbortSignal, first: boolean): Promise<void> {
    const { name, logger, startupTimeoutMs } = this.options;
    const client = new Client({ name: "nexo", version: NEXO_VERSION }, { capabilities: {} });
    client.onclose = () => this.handleClose(client);
    client.onerror = (error) => logger.debug({ mcp_server: name, err: error.message }, "MCP transport error");
    // Registered before the handshake: a change announced while we are still listing is not lost.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresh());
    try {
      if (first) this.phase = "handshake";
      await untilAborted(client.connect(transport, { signal, timeout: startupTimeoutMs }), signal);
      if (first) this.phase = "list_tools";
      const tools = client.getServerCapabilities()?.tools
        ? await untilAborted(listAllTools(client, signal, startupTimeoutMs), signal)
        : [];
      const before = [...this.entries.keys()].join("\n");
      const previous = this.client;
      this.client = client;
      this.setTools(tools);
      await previous?.close().catch(() => undefined);
      if (!first && this.state === "connected" && before !== [...this.entries.keys()].join("\n"))
        this.options.onToolsChanged?.();
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  private shutdown(): Promise<void> {
    this.closing ??= (async () => {
      const http = this.httpTransport;
      if (http?.sessionId !== undefined) {
        await untilAborted(http.terminateSession(), AbortSignal.timeout(HTTP_TERMINATE_TIMEOUT_MS)).catch(
          () => undefined,
        );
      }
      await this.client?.close().catch(() => undefined);
      // The SDK forgets the transport once it has closed by itself, so close it directly as well.
      await http?.close().catch(() => undefined);
      await this.stdio?.stop();
    })();
    return this.closing;
  }

  private handleClose(client: Client): void {
    // A stdio server's fate is told by its supervisor; an old client closing is no news.
    if (client !== this.client || this.stdio !== undefined || this.state !== "connected") return;
    this.lost("the connection was closed");
  }

  private lost(reason: string): void {
    if (this.state !== "connected" && this.state !== "restarting") return;
    this.state = "lost";
    this.goneReason = reason;
    this.options.logger.error({ mcp_server: this.options.name, reason }, "MCP server went away");
    // Whatever the server left behind goes too.
    void this.shutdown();
    this.options.onLost?.(reason);
  }

  /** Re-lists the tools after a list_changed; concurrent notifications collapse into one more pass. */
  private refresh(): void {
    if (this.state === "connecting" || this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    const client = this.client;
    if (this.state !== "connected" || client === undefined) return;
    this.refreshing = true;
    void (async () => {
      try {
        do {
          this.refreshAgain = false;
          const tools = await listAllTools(client, undefined, this.options.callTimeoutMs);
          if (this.state !== "connected" || this.client !== client) return;
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
    this.entries = toolEntries(this.options.name, tools, this.options.logger);
  }
}

function resolvedCwd(options: McpConnectionOptions): string {
  const cwd = options.config.transport === "stdio" ? (options.config.cwd ?? ".") : ".";
  return isAbsolute(cwd) ? cwd : resolve(options.configDir ?? process.cwd(), cwd);
}

function isSdkError(error: unknown, code: ErrorCode): boolean {
  return error instanceof SdkMcpError && error.code === code;
}
