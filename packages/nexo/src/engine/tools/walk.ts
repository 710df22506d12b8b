/**
 * Walking a directory tree for Glob and Grep.
 *
 * Symlinks are reported but never followed into: following them could leave the workspace or loop.
 * Directories named in `skipDirs` (node_modules, .git by default) are not entered, unless the walk
 * starts inside one. Unreadable directories are skipped. The walk stops after `maxEntries` entries
 * so one call cannot scan a whole disk.
 */
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { resolveInWorkspace } from "./confine.js";

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
  /** Absolute path. */
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
 * returns `false` to end the walk early.
 */
export async function walkFiles(
  root: string,
  visit: (entry: WalkEntry) => boolean | undefined | Promise<boolean | undefined>,
  options: WalkOptions = {},
): Promise<WalkResult> {
  const skip = new Set(options.skipDirs ?? DEFAULT_SKIP_DIRS);
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  let budget = options.maxEntries ?? 200_000;
  let truncated = false;

  const walkDir = async (dir: string, relative: string, depth: number): Promise<boolean> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
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
      const path = join(dir, entry.name);
      const rel = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (skip.has(entry.name) || depth >= maxDepth) continue;
        if (!(await walkDir(path, rel, depth + 1))) return false;
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        if ((await visit({ path, relative: rel, isSymlink: entry.isSymbolicLink() })) === false) return false;
      }
    }
    return true;
  };

  await walkDir(root, "", 1);
  return { truncated };
}

/**
 * The real file behind a walked entry, or `undefined` when it should be passed over: a symlink
 * whose target is missing, is not a regular file, or lies outside the workspace while confined.
 */
export async function walkedFile(
  entry: WalkEntry,
  workspace: string,
  unconfined: boolean,
): Promise<{ path: string; mtimeMs: number; size: number } | undefined> {
  let path = entry.path;
  if (entry.isSymlink) {
    try {
      path = await resolveInWorkspace(workspace, entry.path, { unconfined });
    } catch {
      return undefined;
    }
  }
  const stats = await stat(path).catch(() => undefined);
  if (stats === undefined || !stats.isFile()) return undefined;
  return { path, mtimeMs: stats.mtimeMs, size: stats.size };
}
