export { createLogger, type Logger } from "./log.js";
export { NEXO_VERSION } from "./version.js";
