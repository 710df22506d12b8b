/**
 * The bubblewrap sandbox of plugin contract §2.2: deciding whether a plugin may start and under
 * which policy (`resolveSandbox`), and turning that policy into exactly the bwrap flags the
 * contract lists (`buildBwrapArgs`).
 *
 * The manifest schema already checked bind paths as strings. Here they are checked again as the
 * host will really mount them: `${state_dir}` expanded, symlinks resolved, so a manifest cannot
 * reach a denylisted path through a link (`/opt/x → /root`) or climb out of its state dir.
 *
 * Automatic binds chosen by the host rather than the manifest (the command's directory, the plugin's
 * own directory, the state dir) are refused only when they would expose a denylisted path *whole*
 * (`/`, `/etc`, `/root`). They may sit beneath one: a daemon running as root keeps its state under
 * /root/.nexo and may run node from /root/.nvm, and binding that one directory exposes nothing else.
 */
import { mkdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, posix } from "node:path";
import * as plugin from "@nexo/wire/schemas/plugin";
import { CommandNotFoundError, resolveCommand } from "./command.js";
import {
  SandboxConfigError,
  SandboxHostNetworkError,
  SandboxPathError,
  SandboxRequiredError,
  SandboxUnavailableError,
} from "./sandbox-errors.js";

export const SANDBOX_REQUIRE_VAR = "NEXO_PLUGIN_SANDBOX_REQUIRE";
export const SANDBOX_HOST_NET_ALLOW_VAR = "NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW";

/** The uid/gid bwrap maps the child to with `drop_user = true`: nobody:nogroup. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

export const BWRAP_HARDENING_FLAGS = [
  "--die-with-parent",
  "--unshare-pid",
  "--unshare-uts",
  "--unshare-ipc",
  "--new-session",
] as const;

/** Bound read-only when they exist on the host, so ordinary binaries and TLS roots work. */
export const SANDBOX_SKELETON_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ssl"] as const;

/** One bind: `source` is the real host path mounted, `target` where the plugin sees it. */
export interface BindMount {
  source: string;
  target: string;
}

export interface SandboxPolicy {
  network: plugin.SandboxNetwork;
  dropUser: boolean;
  readPaths: readonly BindMount[];
  writePaths: readonly BindMount[];
}

export type SandboxDecision =
  | { enabled: false }
  | { enabled: true; bwrapPath: string; policy: SandboxPolicy };

export interface SandboxKnobs {
  /** NEXO_PLUGIN_SANDBOX_REQUIRE: refuse every plugin that does not enable the sandbox. */
  require: boolean;
  /** NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: let manifests keep the host network. */
  hostNetworkAllowed: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads the operator knobs. An unrecognised value is an error rather than "off", so a typo such as
 * `REQUIRE=ture` cannot silently disable strict mode.
 */
export function readSandboxKnobs(env: Env): SandboxKnobs {
  return {
    require: readFlag(env, SANDBOX_REQUIRE_VAR),
    hostNetworkAllowed: readFlag(env, SANDBOX_HOST_NET_ALLOW_VAR),
  };
}

export interface ResolveSandboxOptions {
  /** The plugin's per-instance state root; `${state_dir}` expands to it. Created if missing. */
  stateDir: string;
  /** Finds bwrap; default: search `env.PATH`. Returning `undefined` means "not installed". */
  findBwrap?: (env: Env) => string | undefined;
  /** Default `process.platform`. bubblewrap exists only on Linux. */
  platform?: NodeJS.Platform;
}

/**
 * Decides how the plugin may start. `env` is the daemon's environment (for the knobs and PATH).
 * Throws a `SandboxError` subclass when it may not start at all; never falls back to running an
 * enabled sandbox's plugin without it.
 */
export function resolveSandbox(
  manifestSandbox: plugin.ManifestSandbox | undefined,
  env: Env,
  options: ResolveSandboxOptions,
): SandboxDecision {
  const knobs = readSandboxKnobs(env);
  if (manifestSandbox?.enabled !== true) {
    if (knobs.require) throw new SandboxRequiredError();
    return { enabled: false };
  }
  const platform = options.platform ?? process.platform;
  if (platform !== "linux") {
    throw new SandboxUnavailableError(`bubblewrap sandboxing is Linux-only and this host is ${platform}`);
  }
  const network = manifestSandbox.network ?? plugin.SANDBOX_DEFAULTS.network;
  if (network === "host" && !knobs.hostNetworkAllowed) throw new SandboxHostNetworkError();

  const stateDir = prepareStateDir(options.stateDir);
  const readPaths = (manifestSandbox.fs_read_paths ?? []).map((path) => literalBind(path, "read"));
  const writePaths = (manifestSandbox.fs_write_paths ?? []).map((path) =>
    path.includes(plugin.SANDBOX_STATE_DIR_TOKEN) ? stateDirBind(path, stateDir) : literalBind(path, "write"),
  );

  const bwrapPath = (options.findBwrap ?? findBwrapOnPath)(env);
  if (bwrapPath === undefined) {
    throw new SandboxUnavailableError(
      "bwrap (bubblewrap) was not found on PATH; install it (apt install bubblewrap)",
    );
  }
  return {
    enabled: true,
    bwrapPath,
    policy: {
      network,
      dropUser: manifestSandbox.drop_user ?? plugin.SANDBOX_DEFAULTS.drop_user,
      readPaths,
      writePaths,
    },
  };
}

export interface BwrapContext {
  /** Directories holding the entrypoint binary (its own and its symlink target's), bound read-only. */
  commandDirs: readonly string[];
  /** Other host-chosen directories to expose read-only, e.g. the plugin's install directory. */
  extraReadOnlyDirs?: readonly string[];
  /** Default: the path exists on this host. Lets tests pin the skeleton. */
  pathExists?: (path: string) => boolean;
}

/**
 * The bwrap flags for `policy`, in a stable order: process hardening, filesystem skeleton, the
 * command's directories, network, user, then the manifest's read and write binds (later mounts win
 * in bwrap, so a write bind beneath a read-only one stays writable). The command and its arguments
 * are not included: callers append `--`, the command and its arguments.
 */
export function buildBwrapArgs(policy: SandboxPolicy, context: BwrapContext): string[] {
  const exists = context.pathExists ?? pathExists;
  const args: string[] = [...BWRAP_HARDENING_FLAGS, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"];
  const readOnlyTargets = new Set<string>();
  const bindReadOnly = (source: string, target: string) => {
    if (readOnlyTargets.has(target)) return;
    readOnlyTargets.add(target);
    args.push("--ro-bind", source, target);
  };
  for (const path of SANDBOX_SKELETON_PATHS) {
    if (exists(path)) bindReadOnly(path, path);
  }
  for (const dir of [...context.commandDirs, ...(context.extraReadOnlyDirs ?? [])]) {
    const target = hostChosenDir(dir);
    bindReadOnly(target, target);
  }
  if (policy.network === "deny") args.push("--unshare-net");
  if (policy.dropUser) {
    args.push("--unshare-user", "--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_GID));
  } else {
    // Beyond §2.2's list, on purpose: without a user namespace a daemon running as root would
    // hand the plugin nearly every root capability inside the sandbox (measured CapEff
    // 000001fffeffffff). Dropping them keeps drop_user = false from meaning "root".
    args.push("--cap-drop", "ALL");
  }
  for (const bind of policy.readPaths) args.push("--ro-bind", bind.source, bind.target);
  for (const bind of policy.writePaths) args.push("--bind", bind.source, bind.target);
  return args;
}

/** Whether `dir` (after resolving symlinks) is inside the sandbox's view of the host. */
export function isVisibleInSandbox(policy: SandboxPolicy, dir: string): boolean {
  const targets = [...policy.readPaths, ...policy.writePaths].map((bind) => bind.target);
  return targets.some((target) => dir === target || dir.startsWith(`${target}/`));
}

// --- paths -----------------------------------------------------------------------------------------

function prepareStateDir(stateDir: string): string {
  if (!isAbsolute(stateDir)) throw new SandboxPathError(stateDir, "the state dir must be an absolute path");
  const normalized = normalize(stateDir);
  mkdirSync(normalized, { recursive: true, mode: 0o700 });
  rejectCovering(normalized, realpathSync(normalized));
  return normalized;
}

function literalBind(path: string, kind: plugin.SandboxPathKind): BindMount {
  const problem = plugin.sandboxPathProblem(path, kind);
  if (problem !== undefined) throw new SandboxPathError(path, problem);
  const target = normalize(path);
  const source = realOrThrow(path, target);
  const denied = plugin.sandboxDenylistHit(source);
  if (denied !== undefined) {
    throw new SandboxPathError(
      path,
      `resolves to ${source}, which touches the denylisted host path ${denied}`,
    );
  }
  return { source, target };
}

function stateDirBind(path: string, stateDir: string): BindMount {
  const problem = plugin.sandboxPathProblem(path, "write");
  if (problem !== undefined) throw new SandboxPathError(path, problem);
  const target = normalize(stateDir + path.slice(plugin.SANDBOX_STATE_DIR_TOKEN.length));
  // Subdirectories of the state dir belong to the plugin, so they are created rather than refused.
  mkdirSync(target, { recursive: true, mode: 0o700 });
  const source = realOrThrow(path, target);
  const realState = realpathSync(stateDir);
  if (source !== realState && !source.startsWith(`${realState}/`)) {
    throw new SandboxPathError(path, `resolves to ${source}, outside the state dir ${realState}`);
  }
  rejectCovering(path, source);
  return { source, target };
}

/** For host-chosen directories: refused only when they would expose a denylisted path whole. */
function hostChosenDir(dir: string): string {
  if (!isAbsolute(dir)) throw new SandboxPathError(dir, "must be an absolute path");
  const target = normalize(dir);
  rejectCovering(dir, target);
  rejectCovering(dir, realOrThrow(dir, target));
  return target;
}

function rejectCovering(shown: string, path: string): void {
  const asParent = path === "/" ? "/" : `${path}/`;
  const covered = plugin.SANDBOX_DENYLIST_HOST_PATHS.find(
    (denied) => denied === path || denied.startsWith(asParent),
  );
  if (covered !== undefined) {
    throw new SandboxPathError(shown, `binding ${path} would expose the denylisted host path ${covered}`);
  }
}

function realOrThrow(shown: string, path: string): string {
  try {
    return realpathSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new SandboxPathError(
      shown,
      code === "ENOENT" ? "does not exist on this host" : `cannot be resolved (${code})`,
    );
  }
}

function normalize(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

function pathExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function findBwrapOnPath(env: Env): string | undefined {
  try {
    return resolveCommand("bwrap", { pathEnv: env.PATH }).path;
  } catch (error) {
    if (error instanceof CommandNotFoundError) return undefined;
    throw error;
  }
}

const ON = new Set(["1", "true", "yes", "on"]);
const OFF = new Set(["", "0", "false", "no", "off"]);

function readFlag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (ON.has(value)) return true;
  if (OFF.has(value)) return false;
  throw new SandboxConfigError(name, raw);
}
