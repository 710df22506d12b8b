/**
 * Typed errors of the MCP client. Each carries a stable `code` for code and a message for people;
 * connection failures also carry the last lines the server wrote to stderr, which is usually where
 * the real reason is ("ModuleNotFoundError", "GITHUB_TOKEN is not set", ...).
 */

export type McpErrorCode =
  | "mcp_invalid_config"
  | "mcp_connect_failed"
  | "mcp_server_exists"
  | "mcp_not_connected"
  | "mcp_call_failed"
  | "mcp_manager_closed";

export abstract class McpError extends Error {
  abstract readonly code: McpErrorCode;
}

/** A config handed to the manager breaks the mcp.yaml schema (`server` is unset for the whole file). */
export class McpConfigError extends McpError {
  override readonly name = "McpConfigError";
  readonly code = "mcp_invalid_config";
  constructor(
    readonly server: string | undefined,
    readonly issues: readonly string[],
  ) {
    const subject = server === undefined ? "The MCP config" : `MCP server "${server}"`;
    super(`${subject} is not valid: ${issues.join("; ")}`);
  }
}

/** Why a connection attempt failed, for callers that react differently (e.g. retry on timeout). */
export type McpConnectFailure = "spawn" | "exited" | "timeout" | "handshake" | "list_tools" | "cancelled";

/** A server could not be started, reached, initialised or asked for its tools. */
export class McpConnectError extends McpError {
  override readonly name = "McpConnectError";
  readonly code = "mcp_connect_failed";
  constructor(
    readonly server: string,
    readonly failure: McpConnectFailure,
    /** The reason alone, without the server name (what status reports show). */
    readonly reason: string,
    readonly stderrTail: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(`MCP server "${server}" failed to connect: ${reason}`, options);
  }
}

/** `connect` was asked for a name that is already connected (or connecting). */
export class McpServerExistsError extends McpError {
  override readonly name = "McpServerExistsError";
  readonly code = "mcp_server_exists";
  constructor(readonly server: string) {
    super(`MCP server "${server}" is already connected; close it before connecting it again`);
  }
}

/** The manager was closed; it connects nothing more. */
export class McpManagerClosedError extends McpError {
  override readonly name = "McpManagerClosedError";
  readonly code = "mcp_manager_closed";
  constructor(readonly server: string) {
    super(`cannot connect MCP server "${server}": the MCP manager is closed`);
  }
}

/** A call went to a server that failed to start, has exited, or was closed. */
export class McpNotConnectedError extends McpError {
  override readonly name = "McpNotConnectedError";
  readonly code = "mcp_not_connected";
  constructor(
    readonly server: string,
    /** What happened to it, when known ("exited with code 1"). */
    readonly detail?: string,
  ) {
    super(`MCP server ${server} is not connected${detail === undefined ? "" : ` (${detail})`}`);
  }
}

export type McpCallFailure = "timeout" | "cancelled" | "connection_lost" | "rejected";

/** A tool call did not produce a result: it timed out, was cancelled, lost its server, or was refused. */
export class McpCallError extends McpError {
  override readonly name = "McpCallError";
  readonly code = "mcp_call_failed";
  constructor(
    readonly server: string,
    readonly tool: string,
    readonly failure: McpCallFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
