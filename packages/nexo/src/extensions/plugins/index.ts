/**
 * The plugin host (plugin contract 1.10.0): manifests, one host per plugin, its services and
 * broker bridge, the five wrappers into the engine's registries, the manager of many plugins,
 * and the check behind `nexo plugin check`. See docs/plugins.md.
 */
export * from "./bridge.js";
export * from "./calls.js";
export * from "./catalog.js";
export * from "./channel.js";
export * from "./check.js";
export * from "./errors.js";
export * from "./grants.js";
export * from "./handshake.js";
export * from "./hook.js";
export * from "./host.js";
export * from "./llm.js";
export * from "./llm-mapping.js";
export * from "./manager.js";
export * from "./manifest.js";
export * from "./manifest-tools.js";
export * from "./memory.js";
export * from "./registration.js";
export * from "./services.js";
export * from "./timeouts.js";
export * from "./tool.js";
export * from "./version-requirement.js";
