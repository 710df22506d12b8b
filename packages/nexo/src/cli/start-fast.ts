/**
 * `nexo start` without commander. The daemon runs for as long as the process does, and a launch
 * parsed by commander keeps the whole program alive with it: commander's code and source, and every
 * command's declaration (the program is on the stack of `parseAsync` until the daemon stops). A
 * plain launch — the global `--log-format` at most once with a valid format, then `start` followed
 * only by its four value flags, each once, with a value — has one meaning, so this reads it
 * directly; anything else (help, an invalid format, an unknown, repeated or empty flag, a value that
 * looks like a flag, no `--config`) goes to commander, which gives it the help, usage errors and
 * exit codes it always had.
 */
import type { LogFormat } from "../log.js";
import type { StartFlags } from "./start-run.js";

const VALUE_FLAGS: Readonly<Record<string, keyof StartFlags>> = {
  "--config": "config",
  "--state-dir": "stateDir",
  "--appserver": "appserver",
  "--appserver-agent": "appserverAgent",
};

/**
 * The formats commander's `--log-format` accepts (cli/program-base.ts checks LOG_FORMATS). Typed
 * as a record over LogFormat so a format added there fails to compile here until it is added; not
 * imported, since log.ts loads pino, which the daemon loads later, under its start-up heap holds.
 */
const LOG_FORMAT_NAMES: Readonly<Record<LogFormat, true>> = { json: true, pretty: true, auto: true };

/** A plain `nexo start` launch, read. */
export interface FastStart {
  flags: StartFlags & { config: string };
  /** `--log-format`'s value, when given (commander's hook would put it in NEXO_LOG_FORMAT). */
  logFormat?: LogFormat;
}

/** The global `--log-format` before the command: its value and where the command starts. */
function leadingLogFormat(args: readonly string[]): { logFormat?: LogFormat; rest: number } | undefined {
  const first = args[0];
  if (first === undefined || !first.startsWith("--log-format")) return { rest: 0 };
  let value: string | undefined;
  let rest: number;
  if (first === "--log-format") {
    value = args[1];
    rest = 2;
  } else if (first.startsWith("--log-format=")) {
    value = first.slice("--log-format=".length);
    rest = 1;
  } else return undefined;
  if (value === undefined || !Object.hasOwn(LOG_FORMAT_NAMES, value)) return undefined;
  return { logFormat: value as LogFormat, rest };
}

/** A plain `nexo start` launch (`args` without node and the script), else undefined. */
export function fastStart(args: readonly string[]): FastStart | undefined {
  const global = leadingLogFormat(args);
  if (global === undefined) return undefined;
  const flags = fastStartFlags(args.slice(global.rest));
  if (flags === undefined) return undefined;
  return global.logFormat === undefined ? { flags } : { flags, logFormat: global.logFormat };
}

/** The flags of a plain `start` (`args` from the command on), else undefined. */
export function fastStartFlags(args: readonly string[]): (StartFlags & { config: string }) | undefined {
  if (args[0] !== "start") return undefined;
  const flags: StartFlags = {};
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    const equals = arg.indexOf("=");
    const key = Object.hasOwn(VALUE_FLAGS, equals === -1 ? arg : arg.slice(0, equals))
      ? VALUE_FLAGS[equals === -1 ? arg : arg.slice(0, equals)]
      : undefined;
    if (key === undefined || flags[key] !== undefined) return undefined;
    const value = equals === -1 ? args[++i] : arg.slice(equals + 1);
    if (value === undefined || value === "" || value.startsWith("-")) return undefined;
    flags[key] = value;
  }
  return flags.config === undefined ? undefined : { ...flags, config: flags.config };
}
