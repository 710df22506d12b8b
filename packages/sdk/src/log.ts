/**
 * The SDK's diagnostics: one line each on stderr, which the daemon captures into its logs (stdout
 * is the protocol's). The two kinds of children format their lines differently:
 * - plugins write `plugin: <level>: …` like the upstream SDKs, so host-side log filters written
 *   for them keep working;
 * - microapps write `[INFO] …`, `[WARN] …`, `[ERROR] …`, the prefixes the microapp contract asks
 *   for and the daemon maps to log levels.
 */
import type { PeerLogger } from "@nexo/wire";

export type LogLevel = "info" | "warn" | "error";

/** One stderr line (without the newline) for a level and a message. */
export type LineFormat = (level: LogLevel, message: string) => string;

export class StderrLog implements PeerLogger {
  constructor(private readonly format: LineFormat) {}

  /** Writes `message` at `level`, with `fields` as JSON after it when there are any. */
  write(level: LogLevel, message: string, fields?: object): void {
    let text = this.format(level, message);
    if (fields !== undefined && Object.keys(fields).length > 0) {
      try {
        text += ` ${JSON.stringify(fields)}`;
      } catch {
        // Diagnostics must never throw; unserializable fields are simply left out.
      }
    }
    process.stderr.write(`${text}\n`);
  }

  // PeerLogger: the peer's per-frame debug chatter would flood the daemon's stderr capture.
  debug(): void {}
  warn(fields: object, msg?: string): void {
    this.write("warn", msg ?? "", fields);
  }
  error(fields: object, msg?: string): void {
    this.write("error", msg ?? "", fields);
  }

  warning(message: string, fields?: object): void {
    this.write("warn", message, fields);
  }

  /** Logs an exception a handler threw, with its stack, so the author can find the line. */
  failure(what: string, error: unknown): void {
    const detail =
      error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    this.write("error", `${what} failed: ${detail}`);
  }
}

export const pluginLog = new StderrLog((level, message) => `plugin: ${level}: ${message}`);
export const microappLog = new StderrLog((level, message) => `[${level.toUpperCase()}] ${message}`);

/** The plugin adapter's logger, under the names the plugin code has always used. */
export const stderrLogger: PeerLogger = pluginLog;

export function logHandlerFailure(what: string, error: unknown): void {
  pluginLog.failure(what, error);
}

export function logWarning(message: string, fields?: object): void {
  pluginLog.warning(message, fields);
}
