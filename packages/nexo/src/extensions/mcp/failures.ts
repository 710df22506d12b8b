/**
 * What went wrong, in words: MCP failures turned into typed errors whose messages an operator (or
 * the model, for tool calls) can act on, naming the step that failed, the exit code, the HTTP
 * status, and the server's own last stderr lines.
 */

import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError as SdkMcpError } from "@modelcontextprotocol/sdk/types.js";
import { CommandNotFoundError } from "../command.js";
import { describeExit } from "../supervisor-types.js";
import type { McpServerConfig } from "./config.js";
import { McpCallError, McpConnectError, type McpConnectFailure } from "./errors.js";

/** How a stdio server's process ended. */
export interface StdioExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What a stdio server's process tells about itself: how it last ended by itself, its stderr. */
export interface ServerProcessView {
  readonly lastExit: StdioExit | undefined;
  readonly stderrTail: string[];
}

/** The stderr lines quoted in a reason; the error object carries the whole tail. */
const STDERR_LINES_IN_REASON = 5;

/** The step a connection attempt was in when it failed. */
export type ConnectPhase = "spawn" | "handshake" | "list_tools";

export interface ConnectAttempt {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly startupTimeoutMs: number;
  /** The server's process, for a stdio server. */
  readonly process: ServerProcessView | undefined;
  readonly phase: ConnectPhase;
  /** The startup deadline passed. */
  readonly timedOut: boolean;
  /** The owner gave the attempt up (the manager is closing). */
  readonly cancelled: boolean;
}

/** Why a connection attempt failed. */
export function connectFailure(attempt: ConnectAttempt, error: unknown): McpConnectError {
  const { name, config, startupTimeoutMs, phase } = attempt;
  const stdio = attempt.process;
  const tail = stdio?.stderrTail ?? [];
  const timedOut = attempt.timedOut || isSdkError(error, ErrorCode.RequestTimeout);

  let failure: McpConnectFailure;
  let reason: string;
  if (attempt.cancelled) {
    failure = "cancelled";
    reason = "the connection attempt was cancelled (nexo is shutting down)";
  } else if (phase === "spawn" && config.transport === "stdio") {
    failure = "spawn";
    reason = spawnProblem(config.command, error);
  } else if (stdio?.lastExit !== undefined && !timedOut) {
    failure = "exited";
    reason = withStderr(`${describeExit(stdio.lastExit)} during startup`, tail);
  } else if (timedOut) {
    failure = "timeout";
    const step = phase === "list_tools" ? "list its tools" : "complete the MCP handshake";
    reason = withStderr(`did not ${step} within ${startupTimeoutMs} ms`, tail);
  } else {
    failure = phase === "list_tools" ? "list_tools" : "handshake";
    const step = phase === "list_tools" ? "listing its tools failed" : "the MCP handshake failed";
    reason = withStderr(`${step}: ${describeError(error)}`, tail);
  }
  return new McpConnectError(name, failure, reason, tail, { cause: error });
}

/** Why a tool call produced no result (the server is still connected, or the call was cancelled). */
export function callFailure(
  call: { server: string; tool: string; timeoutMs: number; cancelled: boolean },
  error: unknown,
): McpCallError {
  const { server, tool } = call;
  const options = { cause: error };
  if (call.cancelled)
    return new McpCallError(server, tool, "cancelled", `MCP ${server}/${tool} was cancelled`, options);
  if (isSdkError(error, ErrorCode.RequestTimeout)) {
    const message = `MCP server ${server} did not answer ${tool} within ${call.timeoutMs} ms`;
    return new McpCallError(server, tool, "timeout", message, options);
  }
  if (isSdkError(error, ErrorCode.ConnectionClosed)) {
    return new McpCallError(
      server,
      tool,
      "connection_lost",
      `MCP server ${server} closed the connection`,
      options,
    );
  }
  if (!(error instanceof SdkMcpError) && error instanceof TypeError) {
    // fetch() failing: the HTTP server could not be reached for this call.
    const message = `MCP server ${server} could not be reached: ${describeError(error)}`;
    return new McpCallError(server, tool, "connection_lost", message, options);
  }
  const message = `MCP server ${server} refused the call to ${tool}: ${describeError(error)}`;
  return new McpCallError(server, tool, "rejected", message, options);
}

/** Why a stdio server that had connected is gone (`why`: the supervisor's words), with its stderr. */
export function lossReason(why: string, process: ServerProcessView): string {
  return withStderr(why, process.stderrTail);
}

/** A Streamable HTTP server answered 404 to a request carrying a session id: the session is gone. */
export function isSessionExpired(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** An error's message, with the HTTP status, or the cause fetch() hides behind "fetch failed". */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof StreamableHTTPError && error.code !== undefined) {
    const hint =
      error.code === 401 || error.code === 403 ? " (check the server's headers, e.g. Authorization)" : "";
    return `HTTP ${error.code}${hint}: ${error.message}`;
  }
  const cause = error.cause;
  if (cause instanceof Error && cause.message !== "" && !error.message.includes(cause.message)) {
    return `${error.message} (${cause.message})`;
  }
  return error.message;
}

function spawnProblem(command: string, error: unknown): string {
  if (error instanceof CommandNotFoundError) {
    if (error.problem === "not_found") return `command not found: ${command}`;
    if (error.problem === "not_executable") return `command is not executable: ${command}`;
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOENT") return `command not found: ${command}`;
  if (code === "EACCES") return `command is not executable: ${command}`;
  return `cannot start ${command}: ${describeError(error)}`;
}

function withStderr(reason: string, tail: readonly string[]): string {
  return tail.length === 0 ? reason : `${reason}; stderr: ${tail.slice(-STDERR_LINES_IN_REASON).join("\n")}`;
}

function isSdkError(error: unknown, code: ErrorCode): boolean {
  return error instanceof SdkMcpError && error.code === code;
}
