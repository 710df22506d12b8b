/**
 * The admin RPC (`nexo/admin/*`): what a microapp may ask the daemon to do to its configuration,
 * gated per method by operator-granted capabilities. See ./methods.ts for the method table.
 */
export * from "./agent-events.js";
export * from "./agents.js";
export * from "./audit.js";
export * from "./auth.js";
export * from "./capabilities.js";
export * from "./channels.js";
export type { OperatorTokenHash, TranscriptRole } from "./common.js";
export { OperatorTokenHashSchema, TOKEN_HASH_PATTERN, TranscriptRoleSchema, tokenHash } from "./common.js";
export * from "./credential-persisters.js";
export * from "./credentials.js";
export * from "./envelope.js";
export * from "./escalations.js";
export * from "./llm.js";
export * from "./llm-providers.js";
export * from "./mcp.js";
export * from "./memory.js";
export * from "./meta.js";
export * from "./methods.js";
export * from "./microapps.js";
export * from "./notifications.js";
export * from "./pairing.js";
export * from "./plugins.js";
export * from "./processing.js";
export * from "./processing-shapes.js";
export * from "./secrets.js";
export * from "./skills.js";
export * from "./tenants.js";
export * from "./whatsapp.js";
