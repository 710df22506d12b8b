/**
 * Path confinement for the file tools: the one place that decides whether a path the model gave
 * may be touched.
 *
 * The rule is about real paths, not spellings: a path is allowed when the file it names — after
 * `..` is normalised and every symlink on the way is followed — lies inside the workspace's own
 * real path. The lookup walks directory descriptors one component at a time (locate.ts), and the
 * tools then open, create and rename *inside the directory descriptor the check was made on*, so
 * a directory swapped for a symlink between the check and the use cannot redirect them.
 *
 * Refusals tell the model only what it sent ("Path refused: ../x is outside the workspace"); the
 * real path it resolved to and the workspace's host path stay in the error's fields for the log,
 * because tool results reach whoever is talking to the agent.
 *
 * This guards the file tools only. `Bash` runs arbitrary commands and cannot be confined by path
 * checks; isolating it is the sandbox's job.
 */
import type { Stats } from "node:fs";
import { type FileHandle, realpath } from "node:fs/promises";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { HeldDir } from "./held-dir.js";
import { type Location, LookupError, locate } from "./locate.js";

export interface ConfineOptions {
  /** Lift the confinement (only when the operator set it explicitly). Real paths are still returned. */
  readonly unconfined?: boolean;
  /** The target may not exist yet (Write, or a directory about to be created). */
  readonly forWrite?: boolean;
  /**
   * Real paths of files outside the workspace that may be read anyway (`ToolContext.readableFiles`):
   * only an exact match counts, and never for a write. Only tools that just read pass it.
   */
  readonly alsoReadable?: ReadonlySet<string>;
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
    // The message reaches the model and the people it talks to: only what they sent, no host paths.
    super(
      reason === "nul_byte"
        ? `Path refused: ${JSON.stringify(userPath)} contains a NUL byte`
        : `Path refused: ${userPath} is outside the workspace`,
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

/** The workspace directory is missing or unusable: the operator's problem, reported without its path. */
export class WorkspaceUnavailableError extends Error {
  override readonly name = "WorkspaceUnavailableError";
  readonly code = "workspace_unavailable";
  constructor(
    readonly workspace: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`The workspace is not usable (${reason}); the operator has to fix it`, options);
  }
}

/** A checked location (see locate.ts). `release()` closes the directories the lookup opened. */
export interface ConfinedLocation extends Location {
  /** The workspace's real path. */
  readonly workspace: string;
  release(): Promise<void>;
}

/**
 * Finds what `userPath` (relative to the workspace, or absolute) names and checks it. Throws
 * `PathEscapeError` when the real path is outside the workspace (unless `unconfined`) or contains
 * a NUL byte, and `PathNotFoundError` when it does not exist and `forWrite` is not set. For a
 * path that does not exist yet, the existing part is walked and the missing names appended, so a
 * new file under a symlinked directory is judged by where it would land. Any other failure of the
 * lookup is a `LookupError` carrying the errno code, thrown only once the path passed the check,
 * so a refused path reveals nothing about what exists outside.
 */
export async function locateInWorkspace(
  workspace: string,
  userPath: string,
  options: ConfineOptions = {},
): Promise<ConfinedLocation> {
  const workspaceReal = await realWorkspace(workspace);
  if (userPath.includes("\0")) throw new PathEscapeError(userPath, "nul_byte", undefined, workspaceReal);
  // Relative paths are taken from the workspace as configured; `..` is normalised by name first.
  const absolute = resolve(workspace, userPath);
  const below = componentsBelow(workspace, absolute) ?? componentsBelow(workspaceReal, absolute);
  const components = below ?? absolute.split(sep).filter((part) => part !== "");
  // The common case in one step: the directories on the way are plain directories inside the
  // workspace, so the parent opens directly and the kernel confirms it is where it should be.
  const dirs = components.slice(0, -1);
  const parent =
    below !== undefined && dirs.length > 0
      ? await HeldDir.openVerified(join(workspaceReal, ...dirs))
      : undefined;
  const start =
    parent ??
    (await HeldDir.openTrusted(below === undefined ? "/" : workspaceReal).catch((error) => {
      throw new WorkspaceUnavailableError(workspace, errorCode(error), { cause: error });
    }));
  try {
    const rest = parent === undefined ? components : components.slice(-1);
    const found = await lookUp(start, rest, userPath, workspaceReal, options);
    return withRelease(found, workspaceReal, start);
  } catch (error) {
    await start.close();
    throw error;
  }
}

/**
 * Follows the entry `name` of a directory a walk holds (a symlink met by Glob or Grep) to what it
 * names, with the same check as `locateInWorkspace`. `dir` stays open; release the result.
 */
export async function locateWalkedEntry(
  dir: HeldDir,
  name: string,
  workspaceReal: string,
  options: ConfineOptions = {},
): Promise<ConfinedLocation> {
  const found = await lookUp(dir, [name], name, workspaceReal, options);
  return withRelease(found, workspaceReal, dir, false);
}

/** The real path `userPath` names, checked as `locateInWorkspace` does (nothing is left open). */
export async function resolveInWorkspace(
  workspace: string,
  userPath: string,
  options: ConfineOptions = {},
): Promise<string> {
  const location = await locateInWorkspace(workspace, userPath, options);
  await location.release();
  return location.path;
}

async function lookUp(
  start: HeldDir,
  components: readonly string[],
  userPath: string,
  workspaceReal: string,
  options: ConfineOptions,
): Promise<Location> {
  let found: Location;
  try {
    found = await locate(start, components, { allowMissing: options.forWrite === true });
  } catch (error) {
    if (!(error instanceof LookupError)) throw error;
    checkAllowed(error.path, userPath, workspaceReal, options);
    if (error.code === "ENOENT") throw new PathNotFoundError(userPath, error.path);
    throw error;
  }
  try {
    checkAllowed(found.path, userPath, workspaceReal, options);
  } catch (error) {
    if (found.dir !== start) await found.dir.close();
    throw error;
  }
  return found;
}

/**
 * The rule itself, in one place: inside the workspace's real path, or unconfined by the operator,
 * or — for a read — exactly a file the user attached.
 */
function checkAllowed(path: string, userPath: string, workspaceReal: string, options: ConfineOptions): void {
  if (options.unconfined === true || isInside(workspaceReal, path)) return;
  if (options.forWrite !== true && options.alsoReadable?.has(path) === true) return;
  throw new PathEscapeError(userPath, "outside_workspace", path, workspaceReal);
}

function withRelease(found: Location, workspace: string, start: HeldDir, ownsStart = true): ConfinedLocation {
  // Field by field: `{ ...found, workspace }` takes V8's slow path (about 1 µs a call, Node 20).
  return {
    dir: found.dir,
    name: found.name,
    missing: found.missing,
    path: found.path,
    stats: found.stats,
    workspace,
    async release() {
      if (found.dir !== start) await found.dir.close();
      if (ownsStart) await start.close();
    },
  };
}

/** The components of `path` below `root`, or undefined when `path` is not `root` or under it. */
function componentsBelow(root: string, path: string): string[] | undefined {
  if (!isInside(root, path)) return undefined;
  return relative(root, path).split(sep);
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

/** The workspace's real path; a workspace that does not exist is an operator error, not the model's. */
export async function realWorkspace(workspace: string): Promise<string> {
  if (!isAbsolute(workspace)) throw new WorkspaceUnavailableError(workspace, "not an absolute path");
  try {
    return await realpath(workspace);
  } catch (error) {
    throw new WorkspaceUnavailableError(workspace, errorCode(error), { cause: error });
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

/** The file at a location changed (for instance into a symlink) between the lookup and the open. */
export class PathChangedError extends Error {
  override readonly name = "PathChangedError";
  readonly code = "path_changed";
  constructor(readonly userPath: string) {
    super(`${userPath} changed while it was being opened; try again`);
  }
}

/**
 * Opens the regular file a location names, for reading, in the directory the check was made on
 * and without following a symlink. Anything but the same regular file the lookup saw — a symlink,
 * a FIFO or another file swapped in since — is refused with `PathChangedError`.
 */
export async function openLocatedFile(
  location: Location,
  userPath: string,
): Promise<{ handle: FileHandle; stats: Stats }> {
  if (location.name === undefined) throw new PathChangedError(userPath);
  const handle = await location.dir.openFile(location.name).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ELOOP" || error.code === "ENOENT") throw new PathChangedError(userPath);
    throw error;
  });
  const stats = await handle.stat();
  const same =
    location.stats === undefined || (stats.ino === location.stats.ino && stats.dev === location.stats.dev);
  if (!stats.isFile() || !same) {
    await handle.close();
    throw new PathChangedError(userPath);
  }
  return { handle, stats };
}

/**
 * Reads the whole regular file a location names (opened as `openLocatedFile` does). Returns
 * undefined, without reading, when it is larger than `maxBytes`.
 */
export async function readLocatedFile(
  location: Location,
  userPath: string,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const { handle, stats } = await openLocatedFile(location, userPath);
  try {
    return stats.size > maxBytes ? undefined : await readWhole(handle, stats.size);
  } finally {
    await handle.close();
  }
}

/**
 * The first `size` bytes of an opened file (its size when it was checked), in as few reads as the
 * kernel allows; a file that shrank meanwhile gives what is there.
 */
export async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === size ? buffer : buffer.subarray(0, filled);
}

/**
 * The directory a location names, held open for a walk (Glob, Grep). Close it when it is not
 * `location.dir` itself.
 */
export async function openLocatedDir(location: Location, userPath: string): Promise<HeldDir> {
  if (location.name === undefined) return location.dir;
  return location.dir.subdir(location.name).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ELOOP" || error.code === "ENOENT") throw new PathChangedError(userPath);
    throw error;
  });
}
