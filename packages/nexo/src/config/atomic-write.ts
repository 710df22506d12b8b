/**
 * Replacing a file without ever exposing a partial one: write a temp file next to the target
 * (`.<name>.tmp-<pid>-<random>`, see temp-name.ts), flush it to disk, rename it over the target and
 * flush the directory, so after a crash the target holds either the old or the new bytes. Its own
 * file, apart from the YAML editing of write.ts, because the Write and Edit tools use it too and a
 * session's start-up should not load a YAML library for them.
 */
import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath, rename, unlink } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { tempPathFor } from "./temp-name.js";

export interface WriteFileAtomicOptions {
  /**
   * Mode for a file that does not exist yet (an existing file keeps its own). Default 0o600,
   * owner-only, because config files tend to hold credentials.
   */
  readonly mode?: number;
}

/**
 * Replaces `path` with `data` atomically. An existing target keeps its permission bits (and, when
 * running as root, its owner); a symlinked target is written through, leaving the link in place.
 * On failure the temp file is removed and the target is untouched.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const target = await resolveTarget(path);
  await writeFileAtomicIn(dirname(target), basename(target), data, options);
}

/**
 * Replaces the entry `name` of the directory `dir` atomically, as `writeFileAtomic` does, but never
 * through a symlink: a symlink found there is replaced by the new file, not followed. `dir` may be
 * a `/proc/self/fd/<n>` path, which makes every step (temp file, rename, directory sync) happen in
 * the directory that descriptor holds, whatever has been renamed since it was opened.
 */
export async function writeFileAtomicIn(
  dir: string,
  name: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const target = join(dir, name);
  const found = await lstat(target).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  // Only a regular file passes its mode and owner on; a symlink's are not the file's.
  const existing = found?.isFile() === true ? found : undefined;
  const mode = existing === undefined ? (options.mode ?? 0o600) : existing.mode & 0o7777;
  const temp = tempPathFor(target);
  let handle: FileHandle | undefined;
  try {
    // O_EXCL never follows a symlink planted under the temp name.
    handle = await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
    // Set the final mode explicitly: the umask would otherwise strip bits the original had.
    await handle.chmod(mode);
    if (existing !== undefined && process.getuid?.() === 0) {
      await handle.chown(existing.uid, existing.gid);
    }
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, target);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

/** The real file behind `path` (through symlinks), or the absolute path if it does not exist yet. */
export async function resolveTarget(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return resolve(path);
    throw error;
  }
}

/** Makes the rename itself durable; without this a power cut can bring the old entry back. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, constants.O_RDONLY);
    await handle.sync();
  } catch (error) {
    // Some platforms and filesystems cannot fsync a directory; the rename has happened regardless.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM" && code !== "EBADF") throw error;
  } finally {
    await handle?.close();
  }
}
