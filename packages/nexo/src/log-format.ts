/**
 * The log formats `--log-format` and NEXO_LOG_FORMAT name, and how the flag reaches the loggers.
 * Apart from log.ts because reading the flag must not load pino: a plain `nexo start`
 * (cli/start-fast.ts) reads it before the daemon's start-up heap holds are set.
 */
export type LogFormat = "json" | "pretty" | "auto";
export const LOG_FORMATS: readonly LogFormat[] = ["json", "pretty", "auto"];

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

/**
 * Hands a `--log-format` on: every logger, in this process (through `env`, the environment the
 * commands read) and in the processes it starts, reads NEXO_LOG_FORMAT.
 */
export function passLogFormatOn(format: LogFormat, env: NodeJS.ProcessEnv): void {
  process.env.NEXO_LOG_FORMAT = format;
  env.NEXO_LOG_FORMAT = format;
}
