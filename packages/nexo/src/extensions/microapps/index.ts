/**
 * The microapp host: microapps declared in extensions.yaml, run on the shared supervisor, their
 * tools and hooks offered to the engine, their own requests served by whoever `serve`s them (the
 * admin RPC frame, src/admin/).
 */
export * from "./capabilities.js";
export * from "./catalog.js";
export * from "./definition.js";
export * from "./errors.js";
export * from "./hook.js";
export * from "./host.js";
export * from "./manager.js";
export * from "./tool.js";
