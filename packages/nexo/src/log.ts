/**
 * Logging: pino, always to stderr, because stdout belongs to the protocols (json-stream, AppServer
 * stdio, plugin children). The level comes from NEXO_LOG. Secrets under well-known keys are
 * redacted before a line is written.
 *
 * The format: JSON lines for machines (stderr piped or redirected, or NEXO_LOG_FORMAT=json /
 * `--log-format json`), short coloured lines for people when stderr is a terminal (pino-pretty,
 * loaded only then, so JSON runs never pay for it).
 */
import { createRequire } from "node:module";
import pino from "pino";
import { isoTime } from "./iso-time.js";
import type { LogFormat } from "./log-format.js";

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
  /** Overrides NEXO_LOG_FORMAT; `auto` is pretty on a terminal, JSON otherwise. */
  format?: LogFormat;
}

/** What NEXO_LOG_FORMAT asks for; anything else (unset included) is `auto`. */
function formatOf(raw: string | undefined): LogFormat {
  const lower = raw?.toLowerCase();
  return lower === "json" || lower === "pretty" ? lower : "auto";
}

/** stderr as people read it: time, level and message on one line, then the fields, coloured. */
function prettyStderr(): NodeJS.WritableStream {
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty");
  return pretty.build({
    destination: 2,
    sync: true,
    colorize: process.stderr.isTTY === true && !process.env.NO_COLOR,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname",
    singleLine: true,
  });
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
  const format = options.format ?? formatOf(env.NEXO_LOG_FORMAT);
  const pretty =
    options.destination === undefined &&
    (format === "pretty" || (format === "auto" && process.stderr.isTTY === true));
  const logger = pino(
    {
      level,
      base: { pid: process.pid, ...options.base },
      redact: { paths: REDACTED_PATHS, censor: "[REDACTED]" },
      // pino.stdTimeFunctions.isoTime's text, without toISOString's ICU time-zone lookup (iso-time.ts).
      timestamp: () => `,"time":"${isoTime()}"`,
    },
    options.destination ?? (pretty ? prettyStderr() : pino.destination({ fd: 2, sync: true })),
  );
  if (warning) logger.warn(warning);
  return logger;
}
