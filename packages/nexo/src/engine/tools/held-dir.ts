/**
 * Directories held open by descriptor, and paths that name an entry *of that descriptor*.
 *
 * Node has no openat(2). On Linux, `/proc/self/fd/<n>/<name>` does the same job: the kernel
 * resolves `/proc/self/fd/<n>` to the very directory the descriptor holds — not to a path that
 * could have been swapped for a symlink since — and then looks `name` up inside it. With
 * O_NOFOLLOW, a step is exactly `openat(n, name, O_NOFOLLOW)`; `rename`, `mkdir`, `lstat` and
 * `readlink` on such paths behave like their `*at` forms too.
 *
 * Where /proc is not available (macOS, a container without /proc) the directory's path stands in
 * for the descriptor. That keeps every check but is only as strong as a path check: a directory
 * swapped for a symlink between two steps is not noticed. docs/tools.md says so.
 */
import { constants, type Stats, statSync } from "node:fs";
import { type FileHandle, lstat, open, readlink, stat } from "node:fs/promises";
import { dirname, join } from "node:path";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

/**
 * O_PATH: a descriptor that only names a directory (no read permission needed, as for the search
 * bit a path lookup uses). Node does not export the constant; this is its value on every Linux
 * architecture Node runs on.
 */
const O_PATH = process.platform === "linux" ? 0o10000000 : 0;
const DIRECTORY_FLAGS = (O_PATH === 0 ? O_RDONLY : O_PATH) | O_DIRECTORY;

/** A regular file for reading; O_NONBLOCK and O_NOCTTY so that a FIFO or a terminal swapped in cannot stall or adopt us. */
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

let descriptorPaths: boolean | undefined;

/** Whether `/proc/self/fd/<n>/<name>` paths work here (Linux with /proc mounted). */
export function descriptorPathsWork(): boolean {
  if (descriptorPaths === undefined) {
    try {
      descriptorPaths = process.platform === "linux" && statSync("/proc/self/fd").isDirectory();
    } catch {
      descriptorPaths = false;
    }
  }
  return descriptorPaths;
}

/**
 * Tests run the path fallback on Linux too: `false` forces it, `undefined` detects again. There is
 * no way to force descriptor paths on a system that lacks them.
 */
export function forcePathFallbackForTesting(forced: boolean): void {
  descriptorPaths = forced ? false : undefined;
}

export class HeldDir {
  private constructor(
    /** The directory's real absolute path when it was opened. */
    readonly path: string,
    private readonly handle: FileHandle | undefined,
  ) {}

  /**
   * Opens a directory by absolute path, following symlinks on the way. Only for paths nobody but
   * the operator controls: the workspace itself and `/`.
   */
  static async openTrusted(realPath: string): Promise<HeldDir> {
    if (!descriptorPathsWork()) {
      if (!(await stat(realPath)).isDirectory()) throw fsError("ENOTDIR", realPath);
      return new HeldDir(realPath, undefined);
    }
    return new HeldDir(realPath, await open(realPath, DIRECTORY_FLAGS));
  }

  /**
   * Opens the directory at the real path `realPath` in one step — following whatever symlinks lie
   * on the way — and keeps it only if the descriptor turns out to hold exactly that path (the
   * kernel's own record of it, /proc/self/fd/<n>). Had any component been a symlink, or been
   * swapped for one during the open, the path recorded would differ: then undefined is returned
   * and the caller walks component by component instead. Without descriptor paths: undefined.
   */
  static async openVerified(realPath: string): Promise<HeldDir | undefined> {
    if (!descriptorPathsWork()) return undefined;
    const handle = await open(realPath, DIRECTORY_FLAGS).catch(() => undefined);
    if (handle === undefined) return undefined;
    const dir = new HeldDir(realPath, handle);
    const recorded = await readlink(dir.self()).catch(() => undefined);
    if (recorded === realPath) return dir;
    await dir.close();
    return undefined;
  }

  /** A path naming this directory itself (for readdir, fsync, rename targets). */
  self(): string {
    return this.handle === undefined ? this.path : `/proc/self/fd/${this.handle.fd}`;
  }

  /** A path naming the entry `name` of this directory, looked up in the directory we hold. */
  entry(name: string): string {
    return this.handle === undefined ? join(this.path, name) : `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  /** The entry's own metadata (a symlink is reported as a symlink); undefined when it does not exist. */
  async lstatEntry(name: string): Promise<Stats | undefined> {
    return lstat(this.entry(name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
  }

  /** This directory's metadata. */
  async stat(): Promise<Stats> {
    return this.handle === undefined ? stat(this.path) : this.handle.stat();
  }

  /**
   * Opens the subdirectory `name` without following a symlink there: a symlink, a file or a
   * missing entry fails (ENOTDIR / ELOOP / ENOENT) instead.
   */
  async subdir(name: string): Promise<HeldDir> {
    const path = join(this.path, name);
    if (this.handle === undefined) {
      const stats = await lstat(path);
      if (!stats.isDirectory()) throw fsError(stats.isSymbolicLink() ? "ELOOP" : "ENOTDIR", path);
      return new HeldDir(path, undefined);
    }
    return new HeldDir(path, await open(this.entry(name), DIRECTORY_FLAGS | O_NOFOLLOW));
  }

  /** The directory this one sits in (the kernel's `..` of the descriptor, not of a path). */
  async parent(): Promise<HeldDir> {
    const path = dirname(this.path);
    if (this.handle === undefined) return new HeldDir(path, undefined);
    return new HeldDir(path, await open(this.entry(".."), DIRECTORY_FLAGS));
  }

  /** Opens the entry `name` for reading, never through a symlink and never blocking on a FIFO. */
  openFile(name: string): Promise<FileHandle> {
    return open(this.entry(name), FILE_FLAGS);
  }

  /**
   * Releases the descriptor. The close itself runs in the background: nothing waits on it, and
   * a closed HeldDir is never used again, so a reused descriptor number cannot be mistaken for it.
   */
  close(): Promise<void> {
    void this.handle?.close().catch(() => undefined);
    return Promise.resolve();
  }
}

/** An error shaped like Node's own file-system errors, so callers handle both alike. */
export function fsError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${path}`), { code, path });
}
