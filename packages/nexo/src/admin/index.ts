/**
 * The admin RPC: the frame that serves a microapp's `nexo/admin/*` and `nexo/dispatch` requests
 * (gate, audit, dispatch onto the domains) and the domains themselves. See docs/admin-rpc.md.
 */
export * from "./audit.js";
export * from "./domain.js";
export { ADMIN_DOMAIN_MODULES } from "./domains/index.js";
export * from "./frame.js";
export * from "./gate.js";
export * from "./methods.js";
export * from "./serve.js";
export * from "./services.js";
