/**
 * A child cannot flood the daemon's log. What a child controls — its stderr lines, the unusable
 * frames and refused requests it sends — is logged through a budget: at most `maxLines` lines per
 * window (10 s by default); past that, lines are only counted, and when the window closes one
 * summary line says how many were left out ("4950 more stderr lines in the last 10 s"). Two
 * misbehaving plugins once wrote 400,052 warning lines (101 MB) in seconds.
 *
 * Counting is O(1) per line, and nothing of a suppressed line is kept but its message (the last
 * one, quoted in the summary). The summary timer is unref'd; `flush()` writes a pending summary
 * at once (the owner calls it when the child is gone, so the count is not lost).
 */
import type { SupervisorLogger } from "./supervisor-types.js";

export const DEFAULT_LOG_BUDGET_WINDOW_MS = 10_000;

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface LogBudgetOptions {
  logger: SupervisorLogger;
  /** Lines logged per window before the rest are only counted. */
  maxLines: number;
  windowMs?: number;
  /** What the lines are, for the summary: "stderr lines", "protocol warnings". */
  what: string;
  /** Fields of the summary line (e.g. `{plugin: "slack"}`). */
  fields: Readonly<Record<string, unknown>>;
  /** The clock; default Date.now. */
  now?: () => number;
}

export class LogBudget {
  private readonly options: LogBudgetOptions;
  private readonly windowMs: number;
  private readonly now: () => number;
  private windowStart = 0;
  private spent = 0;
  private suppressed = 0;
  private lastSuppressed: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: LogBudgetOptions) {
    if (!Number.isInteger(options.maxLines) || options.maxLines < 1)
      throw new RangeError(`maxLines must be a positive integer, got ${options.maxLines}`);
    this.options = options;
    this.windowMs = options.windowMs ?? DEFAULT_LOG_BUDGET_WINDOW_MS;
    this.now = options.now ?? Date.now;
  }

  /** Logs the line if the window's budget allows it; otherwise counts it for the summary. */
  log(level: LogLevel, fields: object, message: string): void {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) {
      this.flush();
      this.windowStart = now;
      this.spent = 0;
    }
    if (this.spent < this.options.maxLines) {
      this.spent += 1;
      this.options.logger[level](fields, message);
      return;
    }
    this.suppressed += 1;
    this.lastSuppressed = message;
    this.timer ??= setTimeout(() => this.flush(), this.windowStart + this.windowMs - now).unref();
  }

  /** The same budget as a logger, for code that takes one (a JsonRpcPeer, the broker bridge). */
  asLogger(): SupervisorLogger {
    return {
      debug: (fields, message) => this.log("debug", fields, message ?? ""),
      info: (fields, message) => this.log("info", fields, message ?? ""),
      warn: (fields, message) => this.log("warn", fields, message ?? ""),
      error: (fields, message) => this.log("error", fields, message ?? ""),
    };
  }

  /** Writes the summary of the lines left out so far, if any. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.suppressed === 0) return;
    const { logger, what, fields } = this.options;
    const elapsed = Math.min(this.windowMs, this.now() - this.windowStart);
    const seconds = Math.max(1, Math.ceil(elapsed / 1000));
    logger.warn(
      { ...fields, suppressed: this.suppressed, window_ms: this.windowMs, last: this.lastSuppressed },
      `${this.suppressed} more ${what} in the last ${seconds} s`,
    );
    this.suppressed = 0;
    this.lastSuppressed = undefined;
  }
}
