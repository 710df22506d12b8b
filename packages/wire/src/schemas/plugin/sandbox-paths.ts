/**
 * The lexical rules for `[plugin.sandbox]` bind paths (plugin contract §2.2). They are pure string
 * checks, so the manifest schema applies them; the host repeats `sandboxDenylistHit` on the real
 * path after expanding `${state_dir}` and resolving symlinks, which no schema can do.
 */
import { posix } from "node:path";

/** Expands, at spawn time, to the plugin's per-instance state root. Valid in fs_write_paths only. */
export const SANDBOX_STATE_DIR_TOKEN = "${state_dir}";

/** Host paths no sandbox allowlist may equal, sit under, or contain (§2.2). */
export const SANDBOX_DENYLIST_HOST_PATHS = [
  "/etc/shadow",
  "/etc/sudoers",
  "/etc/sudoers.d",
  "/proc/sys",
  "/proc/kcore",
  "/proc/kallsyms",
  "/sys/firmware",
  "/sys/kernel",
  "/dev/mem",
  "/dev/kmem",
  "/dev/port",
  "/var/run/docker.sock",
  "/run/docker.sock",
  "/private/var/run/docker.sock",
  "/root",
  "/boot",
] as const;

export type SandboxPathKind = "read" | "write";

/**
 * The denylisted path an absolute bind path touches, if any: equal to it, beneath it, or an
 * ancestor that would expose it (so `/` and `/etc` are rejected, `/etc/ssl/certs` is not).
 * `.`/`..` segments and repeated or trailing slashes are resolved first so they cannot hide a hit.
 */
export function sandboxDenylistHit(absolutePath: string): string | undefined {
  const path = stripTrailingSlash(posix.normalize(absolutePath));
  const asParent = path === "/" ? "/" : `${path}/`;
  return SANDBOX_DENYLIST_HOST_PATHS.find(
    (denied) => path === denied || path.startsWith(`${denied}/`) || denied.startsWith(asParent),
  );
}

/** Why a bind path from the manifest is unacceptable, or `undefined` when it is fine. */
export function sandboxPathProblem(path: string, kind: SandboxPathKind): string | undefined {
  if (path.includes(SANDBOX_STATE_DIR_TOKEN)) return stateDirPathProblem(path, kind);
  if (!path.startsWith("/")) return `"${path}" must be an absolute path`;
  const denied = sandboxDenylistHit(path);
  if (denied !== undefined) return `"${path}" touches the denylisted host path ${denied}`;
  return undefined;
}

function stateDirPathProblem(path: string, kind: SandboxPathKind): string | undefined {
  if (kind === "read") {
    return `${SANDBOX_STATE_DIR_TOKEN} is only expanded in fs_write_paths, not in fs_read_paths`;
  }
  const rest = path.slice(SANDBOX_STATE_DIR_TOKEN.length);
  // The token expands to an absolute directory, so anywhere but the first segment it would
  // produce a nonsense path.
  if (!path.startsWith(SANDBOX_STATE_DIR_TOKEN) || (rest !== "" && !rest.startsWith("/"))) {
    return `${SANDBOX_STATE_DIR_TOKEN} may only be the first segment of "${path}"`;
  }
  if (rest.includes(SANDBOX_STATE_DIR_TOKEN)) {
    return `${SANDBOX_STATE_DIR_TOKEN} may appear only once in "${path}"`;
  }
  if (rest.split("/").includes("..")) return `"${path}" must not climb out of ${SANDBOX_STATE_DIR_TOKEN}`;
  return undefined;
}

function stripTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
