export {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  type McpConfig,
  type McpConfigInput,
  McpConfigSchema,
  type McpHttpServerConfig,
  McpHttpServerConfigSchema,
  type McpServerConfig,
  type McpServerConfigInput,
  McpServerConfigSchema,
  McpServerNameSchema,
  type McpStdioServerConfig,
  McpStdioServerConfigSchema,
  type McpTransportKind,
  SERVER_NAME,
  serverConfigFromFields,
  serverNameProblem,
} from "./config.js";
export type { McpLogger } from "./connection.js";
export { base64Bytes, MAX_IMAGE_BYTES, toolOutputFromResult } from "./content.js";
export {
  McpCallError,
  type McpCallFailure,
  McpConfigError,
  McpConnectError,
  type McpConnectFailure,
  McpError,
  type McpErrorCode,
  McpManagerClosedError,
  McpNotConnectedError,
  McpServerExistsError,
} from "./errors.js";
export type { ServerProcessView, StdioExit } from "./failures.js";
export {
  type McpConnectDefaults,
  McpManager,
  type McpManagerEvents,
  type McpManagerOptions,
  type McpServerState,
  type McpServerStatus,
} from "./manager.js";
export { createMcpTool, type McpToolCaller } from "./mcp-tool.js";
export {
  cleanToolName,
  MAX_TOOL_NAME_LENGTH,
  MCP_NAME_SEPARATOR,
  MCP_TOOL_PREFIX,
  namespaceTools,
  serverOfToolName,
} from "./naming.js";
export { syncMcpTools } from "./registry-sync.js";
export { IncarnationTransport, stdioServerEnv, stdioSpawnSpec } from "./stdio-transport.js";
export type { McpToolEntry } from "./tool-list.js";
