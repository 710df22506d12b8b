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
import { isLogFormat, type LogFormat } from "../log-format.js";
import type { StartFlags } from "./start-run.js";

const VALUE_FLAGS: Readonly<Record<string, keyof StartFlags>> = {
  "--config": "config",
  "--state-dir": "stateDir",
  "--appserver": "appserver",
  "--appserver-agent": "appserverAgent",
};

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
  if (value === undefined || !isLogFormat(value)) return undefined;
  return { logFormat: value, rest };
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
    const name = equals === -1 ? arg : arg.slice(0, equals);
    const key = Object.hasOwn(VALUE_FLAGS, name) ? VALUE_FLAGS[name] : undefined;
    if (key === undefined || flags[key] !== undefined) return undefined;
    const value = equals === -1 ? args[++i] : arg.slice(equals + 1);
    if (value === undefined || value === "" || value.startsWith("-")) return undefined;
    flags[key] = value;
  }
  return flags.config === undefined ? undefined : { ...flags, config: flags.config };
}
