/**
 * The microapp contract: line-delimited JSON-RPC over a long-lived child's stdio. The daemon
 * calls `microappMethods` (and `hooks/<name>`), pushes `microappNotifications`, and answers the
 * microapp's `microappOutboundMethods` plus the admin RPC (../admin).
 */
export * from "./console.js";
export * from "./context.js";
export * from "./envelope.js";
export * from "./extensions-config.js";
export * from "./hooks.js";
export * from "./manifest.js";
export * from "./methods.js";
export * from "./notifications.js";
export * from "./outbound.js";
export * from "./tools.js";
