/**
 * Walking a directory tree for Glob and Grep.
 *
 * The walk holds each directory open and lists, enters and opens entries *of that descriptor*
 * (see held-dir.ts), so a directory swapped for a symlink while the walk runs is never followed.
 * Symlinks are reported but never walked into: following them could leave the workspace or loop.
 * Directories named in `skipDirs` (node_modules, .git by default) are not entered, unless the walk
 * starts inside one. Unreadable directories are skipped. The walk stops after `maxEntries` entries
 * so one call cannot scan a whole disk.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type ConfinedLocation, locateWalkedEntry } from "./confine.js";
import type { HeldDir } from "./held-dir.js";

export const DEFAULT_SKIP_DIRS: readonly string[] = ["node_modules", ".git"];

export interface WalkOptions {
  readonly skipDirs?: readonly string[];
  /** Deepest level to descend to (1 = only the root's own entries). Default: no limit. */
  readonly maxDepth?: number;
  /** Stop after this many directory entries. Default 200 000. */
  readonly maxEntries?: number;
  readonly signal?: AbortSignal;
}

export interface WalkEntry {
  /** The directory holding the entry; open while `visit` runs, closed after. */
  dir: HeldDir;
  name: string;
  /** Absolute path: the directory's real path and the name. */
  path: string;
  /** Path relative to the walk's root, `/`-separated. */
  relative: string;
  /** A symlink (to anything); a plain file otherwise. */
  isSymlink: boolean;
}

export interface WalkResult {
  /** Whether the entry limit cut the walk short (not set when `visit` ended it). */
  truncated: boolean;
}

/**
 * Calls `visit` for each file (and symlink) under `root`, depth first, in name order. `visit`
 * returns `false` to end the walk early. `root` stays open; the walk closes what it opened.
 */
export async function walkFiles(
  root: HeldDir,
  visit: (entry: WalkEntry) => boolean | undefined | Promise<boolean | undefined>,
  options: WalkOptions = {},
): Promise<WalkResult> {
  const skip = new Set(options.skipDirs ?? DEFAULT_SKIP_DIRS);
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  let budget = options.maxEntries ?? 200_000;
  let truncated = false;

  const walkDir = async (dir: HeldDir, relative: string, depth: number): Promise<boolean> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir.self(), { withFileTypes: true });
    } catch {
      return true;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      options.signal?.throwIfAborted();
      if (--budget < 0) {
        truncated = true;
        return false;
      }
      const rel = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (skip.has(entry.name) || depth >= maxDepth) continue;
        // Opened without following: a directory swapped for a symlink since the listing is skipped.
        const sub = await dir.subdir(entry.name).catch(() => undefined);
        if (sub === undefined) continue;
        try {
          if (!(await walkDir(sub, rel, depth + 1))) return false;
        } finally {
          await sub.close();
        }
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        const found = { dir, name: entry.name, path: join(dir.path, entry.name), relative: rel };
        if ((await visit({ ...found, isSymlink: entry.isSymbolicLink() })) === false) return false;
      }
    }
    return true;
  };

  await walkDir(root, "", 1);
  return { truncated };
}

/**
 * The regular file behind a walked entry, checked like any path a tool opens, or `undefined` when
 * it should be passed over: a symlink whose target is missing, is not a regular file, or lies
 * outside the workspace while confined. Release the result when done with it. With `stat: false`
 * a plain entry is taken as the listing showed it, without its metadata (`stats` is undefined):
 * whoever opens it checks the kind then (`openLocatedFile`), which saves a call per file.
 */
export async function walkedFile(
  entry: WalkEntry,
  workspaceReal: string,
  unconfined: boolean,
  options: { stat: boolean } = { stat: true },
): Promise<ConfinedLocation | undefined> {
  if (entry.isSymlink) {
    const location = await locateWalkedEntry(entry.dir, entry.name, workspaceReal, { unconfined }).catch(
      () => undefined,
    );
    if (location?.stats?.isFile() === true) return location;
    await location?.release();
    return undefined;
  }
  const stats = options.stat ? await entry.dir.lstatEntry(entry.name).catch(() => undefined) : undefined;
  if (options.stat && stats?.isFile() !== true) return undefined;
  return {
    dir: entry.dir,
    name: entry.name,
    missing: [],
    path: entry.path,
    stats,
    workspace: workspaceReal,
    release: () => Promise.resolve(),
  };
}
