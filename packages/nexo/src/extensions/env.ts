/**
 * The environment a child process (plugin or microapp) starts with.
 *
 * It is built from nothing, never from a copy of `process.env`: the daemon's environment holds
 * provider API keys, tokens and database URLs, and a child must see only what someone chose to give
 * it. Everything below is an explicit grant:
 *
 * 1. a small base so ordinary programs work (PATH, HOME = the child's state dir, TMPDIR, and the
 *    locale/time-zone variables when the daemon has them);
 * 2. variables the operator names for passthrough, copied by name from the daemon's environment;
 * 3. the manifest's `entrypoint.env`;
 * 4. the operator's explicit extra variables (they win over the manifest: the operator decides);
 * 5. the `NEXO_*` variables the daemon itself hands to children, which nobody else may set.
 */
import * as plugin from "@nexo/wire/schemas/plugin";

const RESERVED_ENV_PREFIX = plugin.RESERVED_ENV_PREFIX;

/** Used when the daemon runs without a PATH, so a child can still find `sh`, `env`, interpreters. */
export const FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Locale and time zone change how a child formats text and dates, and hold nothing secret. */
export const BASE_PASSTHROUGH_VARS = ["LANG", "LC_ALL", "TZ"] as const;

/** Where a variable would have come from; carried by errors so the operator knows what to fix. */
export type EnvSource = "manifest" | "operator" | "passthrough" | "daemon";

/** A variable that cannot be given to the child, with the key and the place it came from. */
export class ChildEnvError extends Error {
  readonly key: string;
  readonly source: EnvSource;
  constructor(source: EnvSource, key: string, problem: string) {
    super(`${describeSource(source)} variable "${key}" ${problem}`);
    this.name = "ChildEnvError";
    this.key = key;
    this.source = source;
  }
}

export interface ChildEnvInput {
  /** The child's state directory; becomes HOME unless `home` says otherwise. */
  stateDir: string;
  /** HOME when it must differ from the state dir (e.g. a sandbox that does not mount it). */
  home?: string;
  /** TMPDIR for the child. Default: the daemon's TMPDIR, else `/tmp`. */
  tmpDir?: string;
  /** `[plugin.entrypoint].env` (or a microapp's declared env). `NEXO_*` keys are refused. */
  manifestEnv?: Readonly<Record<string, string>>;
  /** Extra variables the operator configured for this child. `NEXO_*` keys are refused. */
  operatorEnv?: Readonly<Record<string, string>>;
  /** Names the operator allows to be copied from the daemon's environment, when set there. */
  passthrough?: readonly string[];
  /** What the daemon tells the child about itself (NEXO_PLUGIN_ID, NEXO_STATE_DIR, …). */
  nexoVars?: Readonly<Record<string, string>>;
  /** The daemon environment the base and passthrough values are read from. Default `process.env`. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
}

/** Returns a fresh object holding exactly the variables the child may see. */
export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const hostEnv = input.hostEnv ?? process.env;
  const env: Record<string, string> = Object.create(null);

  const home = input.home ?? input.stateDir;
  if (!home.startsWith("/")) {
    throw new ChildEnvError("daemon", "HOME", `must be an absolute path, got "${home}"`);
  }
  env.PATH = nonEmpty(hostEnv.PATH) ?? FALLBACK_PATH;
  env.HOME = home;
  env.TMPDIR = input.tmpDir ?? nonEmpty(hostEnv.TMPDIR) ?? "/tmp";
  for (const name of BASE_PASSTHROUGH_VARS) {
    const value = nonEmpty(hostEnv[name]);
    if (value !== undefined) env[name] = value;
  }

  for (const name of input.passthrough ?? []) {
    checkName("passthrough", name);
    if (name.startsWith(RESERVED_ENV_PREFIX)) {
      throw new ChildEnvError(
        "passthrough",
        name,
        `is reserved: ${RESERVED_ENV_PREFIX}* belongs to the daemon`,
      );
    }
    const value = hostEnv[name];
    if (value === undefined) continue;
    checkValue("passthrough", name, value);
    env[name] = value;
  }

  addGranted(env, "manifest", input.manifestEnv);
  addGranted(env, "operator", input.operatorEnv);

  for (const [key, value] of Object.entries(input.nexoVars ?? {})) {
    checkName("daemon", key);
    if (!key.startsWith(RESERVED_ENV_PREFIX)) {
      throw new ChildEnvError("daemon", key, `must begin with ${RESERVED_ENV_PREFIX}`);
    }
    checkValue("daemon", key, value);
    env[key] = value;
  }
  // A plain object for callers (child_process copies it anyway); the null prototype above only
  // guarded against a key such as "__proto__" turning into a prototype change while building.
  return { ...env };
}

function addGranted(
  env: Record<string, string>,
  source: "manifest" | "operator",
  vars: Readonly<Record<string, string>> | undefined,
): void {
  for (const [key, value] of Object.entries(vars ?? {})) {
    checkName(source, key);
    if (key.startsWith(RESERVED_ENV_PREFIX)) {
      throw new ChildEnvError(
        source,
        key,
        `is reserved: keys beginning with ${RESERVED_ENV_PREFIX} belong to the daemon`,
      );
    }
    checkValue(source, key, value);
    env[key] = value;
  }
}

function checkName(source: EnvSource, key: string): void {
  if (key === "" || key.includes("=") || key.includes("\0")) {
    throw new ChildEnvError(source, key, "is not a usable environment variable name");
  }
}

function checkValue(source: EnvSource, key: string, value: unknown): void {
  if (typeof value !== "string") throw new ChildEnvError(source, key, "must have a string value");
  if (value.includes("\0")) throw new ChildEnvError(source, key, "cannot contain NUL");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function describeSource(source: EnvSource): string {
  switch (source) {
    case "manifest":
      return "manifest entrypoint env";
    case "operator":
      return "operator env";
    case "passthrough":
      return "passthrough";
    case "daemon":
      return "daemon-provided";
  }
}
