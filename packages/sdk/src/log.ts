/**
 * The SDK's diagnostics: one line each on stderr, which the host captures into its logs (stdout is
 * the protocol's). Lines start with `plugin:` like the upstream SDKs', so host-side log filters
 * written for them keep working.
 */
import type { PeerLogger } from "@nexo/wire";

function render(level: string, msg: string | undefined, fields: object | undefined): string {
  let text = `plugin: ${level}: ${msg ?? ""}`;
  if (fields !== undefined && Object.keys(fields).length > 0) {
    try {
      text += ` ${JSON.stringify(fields)}`;
    } catch {
      // Diagnostics must never throw; unserializable fields are simply left out.
    }
  }
  return `${text}\n`;
}

export const stderrLogger: PeerLogger = {
  // Per-frame debug chatter would flood the host's stderr capture; the SDK has nothing it needs.
  debug() {},
  warn(fields, msg) {
    process.stderr.write(render("warn", msg, fields));
  },
  error(fields, msg) {
    process.stderr.write(render("error", msg, fields));
  },
};

/** Logs an exception a handler threw, with its stack, so the author can find the line. */
export function logHandlerFailure(what: string, error: unknown): void {
  const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  process.stderr.write(`plugin: error: ${what} failed: ${detail}\n`);
}

export function logWarning(message: string, fields?: object): void {
  stderrLogger.warn(fields ?? {}, message);
}
