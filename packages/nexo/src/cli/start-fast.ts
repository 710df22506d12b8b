/**
 * `nexo start` without commander. The daemon runs for as long as the process does, and a launch
 * parsed by commander keeps the whole program alive with it: commander's code and source, and every
 * command's declaration (the program is on the stack of `parseAsync` until the daemon stops). A
 * plain launch — `start` followed only by its four value flags, each once, with a value — has one
 * meaning, so this reads it directly; anything else (help, a global flag, an unknown, repeated or
 * empty flag, a value that looks like a flag, no `--config`) goes to commander, which gives it the
 * help, usage errors and exit codes it always had.
 */
import type { StartFlags } from "./start-run.js";

const VALUE_FLAGS: Readonly<Record<string, keyof StartFlags>> = {
  "--config": "config",
  "--state-dir": "stateDir",
  "--appserver": "appserver",
  "--appserver-agent": "appserverAgent",
};

/** The flags of a plain `nexo start` launch (`args` without node and the script), else undefined. */
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
