export * from "./errors.js";
export * from "./framing.js";
export * from "./line-transport.js";
export * from "./peer.js";
export * from "./transport.js";
export * from "./websocket-transport.js";
