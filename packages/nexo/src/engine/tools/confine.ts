/**
 * Path confinement for the file tools: the one place that decides whether a path the model gave
 * may be touched.
 *
 * The rule is about real paths, not spellings: a path is allowed when the file it names — after
 * `..` is normalised and every symlink on the way is followed — lies inside the workspace's own
 * real path. Tools must operate on the path returned here, never on the one the model sent, so
 * what was checked is what gets opened.
 *
 * This guards the file tools only. `Bash` runs arbitrary commands and cannot be confined by path
 * checks; isolating it is the sandbox's job. A check-then-use race (something swapping a directory
 * for a symlink between the check and the open) is likewise out of reach of a path check.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export interface ConfineOptions {
  /** Lift the confinement (only when the operator set it explicitly). Real paths are still returned. */
  readonly unconfined?: boolean;
  /** The target may not exist yet (Write, or a directory about to be created). */
  readonly forWrite?: boolean;
}

export type PathEscapeReason = "outside_workspace" | "nul_byte";

/** A path the model gave leads outside the workspace (or cannot be a path at all). */
export class PathEscapeError extends Error {
  override readonly name = "PathEscapeError";
  readonly code = "path_escape";
  constructor(
    readonly userPath: string,
    readonly reason: PathEscapeReason,
    /** The real path it resolved to (for `outside_workspace`). */
    readonly resolvedPath: string | undefined,
    readonly workspace: string,
  ) {
    super(
      reason === "nul_byte"
        ? `Path refused: ${JSON.stringify(userPath)} contains a NUL byte`
        : `Path refused: ${userPath} resolves to ${resolvedPath}, which is outside the workspace ${workspace}`,
    );
  }
}

/** A path that has to exist (read, edit, search) does not. */
export class PathNotFoundError extends Error {
  override readonly name = "PathNotFoundError";
  readonly code = "path_not_found";
  constructor(
    readonly userPath: string,
    readonly resolvedPath: string,
  ) {
    super(`No such file or directory: ${userPath}`);
  }
}

/** Symlink hops allowed while resolving one path, as the kernel's own limit (ELOOP past it). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Resolves `userPath` (relative to the workspace, or absolute) to the absolute real path it names.
 * Throws `PathEscapeError` when that path is outside the workspace (unless `unconfined`) or
 * contains a NUL byte, and `PathNotFoundError` when it does not exist and `forWrite` is not set.
 * For a path that does not exist yet, the longest existing ancestor is resolved and the missing
 * names are appended, so a new file under a symlinked directory is judged by where it would land.
 */
export async function resolveInWorkspace(
  workspace: string,
  userPath: string,
  options: ConfineOptions = {},
): Promise<string> {
  const workspaceReal = await realWorkspace(workspace);
  if (userPath.includes("\0")) throw new PathEscapeError(userPath, "nul_byte", undefined, workspaceReal);
  // Relative paths are taken from the workspace as configured; its real path is used for the check.
  const { path: real, exists } = await realpathAllowMissing(resolve(workspace, userPath), 0);
  if (options.unconfined !== true && !isInside(workspaceReal, real)) {
    throw new PathEscapeError(userPath, "outside_workspace", real, workspaceReal);
  }
  if (!exists && options.forWrite !== true) throw new PathNotFoundError(userPath, real);
  return real;
}

/** The workspace's real path; a workspace that does not exist is an operator error, not the model's. */
export async function realWorkspace(workspace: string): Promise<string> {
  if (!isAbsolute(workspace)) throw new Error(`The workspace must be an absolute path, got ${workspace}`);
  try {
    return await realpath(workspace);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`The workspace ${workspace} is not usable (${code ?? String(error)})`, { cause: error });
  }
}

/** Whether `path` is `root` or below it; `/work/ws-evil` is not inside `/work/ws`. */
export function isInside(root: string, path: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/** How a path is shown to the model: relative to the workspace when inside it, absolute otherwise. */
export function displayPath(workspaceReal: string, absolute: string): string {
  if (!isInside(workspaceReal, absolute)) return absolute;
  return relative(workspaceReal, absolute) || ".";
}

interface Resolved {
  path: string;
  exists: boolean;
}

/**
 * `realpath` that tolerates missing trailing names. A dangling symlink is followed by hand: it
 * exists as a link, and writing through it would create its target, so its target is what counts.
 */
async function realpathAllowMissing(absolute: string, hops: number): Promise<Resolved> {
  try {
    return { path: await realpath(absolute), exists: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const parent = dirname(absolute);
  if (parent === absolute) return { path: absolute, exists: false };
  const realParent = await realpathAllowMissing(parent, hops);
  const candidate = join(realParent.path, basename(absolute));
  if (!realParent.exists) return { path: candidate, exists: false };
  const stats = await lstat(candidate).catch(() => undefined);
  if (stats?.isSymbolicLink() !== true) return { path: candidate, exists: false };
  if (hops >= MAX_SYMLINK_HOPS) {
    throw Object.assign(new Error(`Too many levels of symbolic links: ${absolute}`), { code: "ELOOP" });
  }
  const target = await readlink(candidate);
  return realpathAllowMissing(resolve(realParent.path, target), hops + 1);
}
