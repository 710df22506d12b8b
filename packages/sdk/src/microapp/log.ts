/**
 * A microapp's log: lines on stderr prefixed `[INFO]`, `[WARN]`, `[ERROR]`, which the daemon maps
 * to its own log levels. Stdout is the protocol's and never written to.
 */
import { microappLog } from "../log.js";

export interface MicroappLogger {
  info(message: string, fields?: object): void;
  warn(message: string, fields?: object): void;
  error(message: string, fields?: object): void;
}

export const log: MicroappLogger = {
  info: (message, fields) => microappLog.write("info", message, fields),
  warn: (message, fields) => microappLog.write("warn", message, fields),
  error: (message, fields) => microappLog.write("error", message, fields),
};
