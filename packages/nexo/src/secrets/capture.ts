/**
 * Taking the secrets out of the process's environment at start-up, once, in the CLI entry.
 *
 * Every variable whose name marks it as a secret (names.ts) is copied into memory, remembered for
 * scrubbing (known.ts), deleted from `process.env` and cleared from the initial environment block
 * (environ.ts). What is returned is the one environment view the start-up code hands on: the
 * environment as it was, secrets included, for `${VAR}` substitution in the config (at start and on
 * every hot reload), the json-stream door's provider keys, and the variables an operator passes to
 * a plugin by name. Children started later — plugins, MCP servers, the Bash tool's commands —
 * inherit `process.env`'s view at most, so they get a secret only when the config gives it to them.
 */
import { clearFromInitialEnvironment } from "./environ.js";
import { rememberSecret } from "./known.js";
import { isSecretName } from "./names.js";

export interface CapturedEnvironment {
  /** The environment at start-up, secrets included. Read it instead of `process.env`. */
  readonly env: NodeJS.ProcessEnv;
  /** The names taken out of `process.env`. */
  readonly captured: readonly string[];
  /** Set when the secrets could not be cleared from /proc/<pid>/environ: log it. */
  readonly warning?: string;
}

export function captureSecrets(env: NodeJS.ProcessEnv = process.env): CapturedEnvironment {
  const view: NodeJS.ProcessEnv = { ...env };
  const captured = Object.keys(env).filter(isSecretName);
  for (const name of captured) {
    rememberSecret(env[name]);
    delete env[name];
  }
  if (env !== process.env) return { env: view, captured };
  const { warning } = clearFromInitialEnvironment(captured);
  return warning === undefined ? { env: view, captured } : { env: view, captured, warning };
}
