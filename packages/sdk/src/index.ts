/**
 * nexo-plugin-sdk: write nexo plugins in TypeScript.
 *
 * Source-compatible with the upstream `nexo-plugin-sdk` (every name it exports is exported here with
 * the same shape), plus handlers for the contract methods upstream lacks — channels, LLM
 * providers, hooks, vector memory — and their typed errors.
 */

export type { EventHandler, PluginAdapterOptions, ShutdownHandler } from "./adapter.js";
export { PluginAdapter } from "./adapter.js";
export type {
  HostLink,
  LineWriter,
  MemoryRecallOptions,
  PublishAndWaitOptions,
  PublishReceipt,
} from "./broker.js";
export { BrokerSender } from "./broker.js";
export {
  ChannelAuthenticationError,
  ChannelCode,
  ChannelConnectionError,
  ChannelError,
  ChannelRateLimitedError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  InternalError,
  InvalidParamsError,
  JsonRpcCode,
  JsonRpcError,
  LlmAuthenticationError,
  LlmCode,
  LlmConnectionError,
  LlmContextOverflowError,
  LlmError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
  ManifestError,
  MemoryBackendError,
  MemoryCode,
  MemoryCollectionNotFoundError,
  MemoryDimensionMismatchError,
  MemoryRateLimitedError,
  MemoryWriteFailedError,
  MethodNotFoundError,
  PluginError,
  PublishRefusedError,
  RpcDecodeError,
  RpcError,
  RpcServerError,
  RpcTimeoutError,
  RpcTransportError,
  ToolCode,
  WireError,
} from "./errors.js";
export { Event } from "./event.js";
export type { LlmCompleteOptions, LlmCompleteResult, MemoryEntry, Message, TokenCount } from "./host.js";
export {
  DEFAULT_RPC_TIMEOUT_MS,
  LLM_STREAM_BUFFER_LIMIT,
  LlmStream,
  LlmStreamOverflowError,
  parseLlmCompleteResult,
  parseMemoryEntry,
} from "./host.js";
export type { ManifestPluginSection, ParsedManifest } from "./manifest.js";
export { parseManifest } from "./manifest.js";
export type {
  BotsListParams,
  BotsListReply,
  BotsSendParams,
  BotsSendReply,
  ChannelFeatureHandlers,
  ChannelSendOutboundHandler,
  ChannelStartHandler,
  ChannelStopHandler,
  CredentialParams,
  CredentialProbe,
  CredentialValidity,
  HandlerContext,
  HookHandler,
  LlmChatContext,
  LlmChatHandler,
  LlmChatReply,
  MemoryBackendHandlers,
  PairingCancelParams,
  PairingStartParams,
  PairingStartReply,
  PairingUpdate,
} from "./options.js";
export { DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS } from "./options.js";
export {
  flushStdoutGuard,
  installStdoutGuard,
  isStdoutGuardInstalled,
  STDOUT_GUARD_MARKER,
  uninstallStdoutGuard,
} from "./stdout-guard.js";
export type { ToolContext, ToolDef, ToolHandler, ToolHandlerWithContext, ToolInvocation } from "./tools.js";
export {
  ToolArgumentInvalidError,
  ToolDeniedError,
  ToolError,
  ToolExecutionFailedError,
  ToolNotFoundError,
  ToolUnavailableError,
  textResult,
  toolDefToJson,
} from "./tools.js";
export type {
  JsonRpcErrorResponse,
  JsonRpcFrame,
  JsonRpcId,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from "./wire.js";
export {
  buildErrorResponse,
  buildResponse,
  JSONRPC_VERSION,
  MAX_FRAME_BYTES,
  serializeFrame,
  toStrictJson,
} from "./wire.js";

/** This package's version (package.json). */
export const VERSION = "0.1.0";
