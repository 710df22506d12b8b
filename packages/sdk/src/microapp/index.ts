/**
 * nexo-plugin-sdk/microapp: write nexo microapps in TypeScript — tools and hooks the daemon calls,
 * its notifications as typed events, and a typed client for every admin RPC method.
 */

export type {
  AdminCallParams,
  AdminCallResult,
  AdminClient,
  AdminMethod,
  AdminMethodCall,
  AdminTree,
  Dispatch,
  DispatchParams,
  DispatchResult,
} from "./admin-client.js";
export type { MicroappNotification, NotificationHandler, NotificationParams } from "./app.js";
export { Microapp } from "./app.js";
export type {
  HandlerContext,
  HookContext,
  HookDecision,
  HookHandler,
  ToolContext,
  ToolHandler,
  ToolSpec,
} from "./definitions.js";
export * from "./errors.js";
export type { MicroappLogger } from "./log.js";
export type { MicroappInit, MicroappOptions, SafeParser } from "./options.js";
export { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MICROAPP_DRAIN_TIMEOUT_MS } from "./options.js";
