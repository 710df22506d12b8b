/**
 * Logging: pino, always to stderr, because stdout belongs to the protocols (json-stream, AppServer
 * stdio, plugin children). The level comes from NEXO_LOG. Secrets under well-known keys are
 * redacted before a line is written.
 */
import pino from "pino";

type LevelWithSilent = pino.LevelWithSilent;

export type Logger = pino.Logger;

const LEVELS: readonly LevelWithSilent[] = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** Keys whose values never reach a log line, at the top level or one object deep. */
const SECRET_KEYS = [
  "api_key",
  "apiKey",
  "authorization",
  "Authorization",
  "token",
  "access_token",
  "bearer",
  "password",
  "secret",
  "credentials",
];
export const REDACTED_PATHS = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `headers.${k}`]);

export interface LoggerOptions {
  /** Overrides NEXO_LOG. */
  level?: string;
  /** Defaults to stderr (fd 2). */
  destination?: NodeJS.WritableStream;
  /** Bound to every line, e.g. {component: "plugin-host"}. */
  base?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
}

/** Resolves a level name; an unknown name falls back to "info" and says so in `warning`. */
export function resolveLevel(raw: string | undefined): { level: LevelWithSilent; warning?: string } {
  if (raw === undefined || raw === "") return { level: "info" };
  const lower = raw.toLowerCase() as LevelWithSilent;
  if (LEVELS.includes(lower)) return { level: lower };
  return { level: "info", warning: `NEXO_LOG=${raw} is not a level (${LEVELS.join(", ")}); using info` };
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const env = options.env ?? process.env;
  const { level, warning } = resolveLevel(options.level ?? env.NEXO_LOG);
  const logger = pino(
    {
      level,
      base: { pid: process.pid, ...options.base },
      redact: { paths: REDACTED_PATHS, censor: "[REDACTED]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
  if (warning) logger.warn(warning);
  return logger;
}
