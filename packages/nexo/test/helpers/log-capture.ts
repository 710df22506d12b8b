/**
 * A real pino logger whose lines are kept in memory, for tests that check what the daemon logs
 * and in which order.
 */
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/log.js";

export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines(): Array<Record<string, unknown> & { msg?: string }>;
  /** The messages so far, in order. */
  messages(): string[];
}

export function captureLog(level = "debug"): CapturedLog {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level, destination });
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown> & { msg?: string });
  return { logger, lines: parsed, messages: () => parsed().map((line) => line.msg ?? "") };
}
