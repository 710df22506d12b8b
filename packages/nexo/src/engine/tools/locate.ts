/**
 * Finding the file a path names by walking directory descriptors, one component at a time.
 *
 * Each step looks the next name up inside the directory already held (see held-dir.ts) and never
 * lets the kernel follow a symlink: a symlink met on the way is read and its target walked the same
 * way, from `/` when absolute or from the directory holding it when relative, at most 40 times (the
 * kernel's own limit). `..` is the parent of the directory held, not of a path string. So whatever
 * a concurrent process swaps while the walk runs, every step is taken from a directory this walk
 * really holds, and the real path reported is the one the final directory was reached by.
 *
 * This module only finds; the confinement policy (is that path allowed?) lives in confine.ts.
 */
import type { Stats } from "node:fs";
import { mkdir, readlink } from "node:fs/promises";
import { join, posix } from "node:path";
import { HeldDir } from "./held-dir.js";

/** Symlink hops allowed while resolving one path, as the kernel's own limit (ELOOP past it). */
export const MAX_SYMLINK_HOPS = 40;
/** Re-reads of one component that changed kind while it was being looked at, before giving up. */
const MAX_CHANGES = 8;

export interface Location {
  /** The directory holding the target, or the target itself when `name` is undefined. */
  readonly dir: HeldDir;
  /** The target's name inside `dir`; undefined when the target is `dir` (a path such as "."). */
  readonly name: string | undefined;
  /** Directories that do not exist yet between `dir` and `name` (only when `allowMissing`). */
  readonly missing: readonly string[];
  /** The absolute real path the target has, or would have once created. */
  readonly path: string;
  /** The target's own metadata (a symlink is never reported: it was followed); undefined when missing. */
  readonly stats: Stats | undefined;
}

/** A lookup failed at `path` (ENOENT, ENOTDIR, ELOOP, EACCES…): the caller decides what to reveal. */
export class LookupError extends Error {
  override readonly name = "LookupError";
  constructor(
    readonly code: string,
    /** The absolute path the walk had reached, with the components it did not get to appended. */
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(`${code}: ${path}`, options);
  }
}

export interface LocateOptions {
  /** Missing trailing components are fine (a file or directories about to be created). */
  readonly allowMissing?: boolean;
}

/**
 * Walks `components` from `start` (borrowed: never closed here). The returned location's `dir` is
 * owned by the caller, who must close it — unless it is `start` itself (`location.dir === start`).
 */
export async function locate(
  start: HeldDir,
  components: readonly string[],
  options: LocateOptions = {},
): Promise<Location> {
  const queue = components.filter((part) => part !== "" && part !== ".");
  let current = start;
  const move = async (next: HeldDir) => {
    if (current !== start) await current.close();
    current = next;
  };
  let hops = 0;
  let changes = 0;
  /** `name` changed kind while being looked at (a swap in progress): look again, a bounded number of times. */
  const retry = (name: string, code: string) => {
    if (++changes > MAX_CHANGES) throw new LookupError(code, join(current.path, name, ...queue));
    queue.unshift(name);
  };
  /** Replaces the symlink `name` in the queue by its target's components. */
  const follow = async (name: string) => {
    if (++hops > MAX_SYMLINK_HOPS) throw new LookupError("ELOOP", join(current.path, name, ...queue));
    const target = await readlink(current.entry(name)).catch((error: NodeJS.ErrnoException) => error);
    if (typeof target !== "string") {
      // EINVAL: no longer a symlink; ENOENT: gone. Either way, look at the name again.
      if (target.code === "EINVAL" || target.code === "ENOENT") return retry(name, target.code);
      throw target;
    }
    if (target.startsWith("/")) await move(await HeldDir.openTrusted("/"));
    queue.unshift(...target.split("/").filter((part) => part !== "" && part !== "."));
  };
  try {
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (name === "..") {
        if (current.path !== "/") await move(await current.parent());
        continue;
      }
      if (queue.length > 0) {
        // A directory on the way. Open it without following; only a failure needs a closer look.
        const next = await current.subdir(name).catch((error: NodeJS.ErrnoException) => error);
        if (next instanceof HeldDir) {
          await move(next);
          continue;
        }
        const stats = await current.lstatEntry(name);
        if (stats === undefined) {
          if (options.allowMissing === true) return missingLocation(current, [name, ...queue]);
          throw new LookupError("ENOENT", join(current.path, name, ...queue));
        }
        if (stats.isSymbolicLink()) await follow(name);
        else if (!stats.isDirectory()) throw new LookupError("ENOTDIR", join(current.path, name, ...queue));
        else if (SWAP_CODES.has(next.code ?? "")) retry(name, next.code!);
        else throw next;
        continue;
      }
      const stats = await current.lstatEntry(name);
      if (stats?.isSymbolicLink() === true) {
        await follow(name);
        continue;
      }
      if (stats === undefined && options.allowMissing !== true) {
        throw new LookupError("ENOENT", join(current.path, name));
      }
      return { dir: current, name, missing: [], path: join(current.path, name), stats };
    }
    return { dir: current, name: undefined, missing: [], path: current.path, stats: await current.stat() };
  } catch (error) {
    if (current !== start) await current.close();
    if (error instanceof LookupError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === "string") throw new LookupError(code, join(current.path, ...queue), { cause: error });
    throw error;
  }
}

/** What opening a directory without following reports when the entry is (now) not a directory. */
const SWAP_CODES = new Set(["ENOTDIR", "ELOOP", "ENOENT"]);

/**
 * The location of a path whose first `rest[0]` does not exist under `dir`. What follows is plain
 * names (nothing there can be a symlink yet), so `..` inside it is resolved by name; climbing out
 * of the missing part altogether cannot name anything that will exist.
 */
function missingLocation(dir: HeldDir, rest: readonly string[]): Location {
  const normalized = posix.normalize(rest.join("/"));
  if (normalized === ".." || normalized.startsWith("../")) {
    throw new LookupError("ENOENT", join(dir.path, ...rest));
  }
  const names = normalized.split("/").filter((part) => part !== "" && part !== ".");
  const name = names.pop()!;
  return { dir, name, missing: names, path: join(dir.path, ...names, name), stats: undefined };
}

/** Creates the missing directories of a location (none may be a symlink) and returns the one holding the target. */
export async function createMissingDirs(location: Location, mode = 0o755): Promise<HeldDir> {
  let dir = location.dir;
  for (const name of location.missing) {
    await mkdir(dir.entry(name), { mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    // Opened without following: something swapped in for the new directory fails here.
    const next = await dir.subdir(name);
    if (dir !== location.dir) await dir.close();
    dir = next;
  }
  return dir;
}
