/**
 * Every wire shape of the five specs, declared once. Each protocol is a namespace because the
 * specs reuse names (every protocol has an "initialize"): `plugin.ToolInvokeParamsSchema`,
 * `appserver.ThreadSchema`, `jsonstream.JsonStreamEventSchema`, …
 */

export * as admin from "./admin/index.js";
export * as appserver from "./appserver/index.js";
export * from "./jsonrpc.js";
export * as jsonstream from "./jsonstream.js";
export * as microapp from "./microapp/index.js";
export * as plugin from "./plugin/index.js";
