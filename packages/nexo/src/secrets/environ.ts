/**
 * Clearing variables from the process's initial environment block.
 *
 * `/proc/<pid>/environ` does not show `process.env`: the kernel reads it from the block the
 * environment was handed over in at exec (between `env_start` and `env_end`, fields 50 and 51 of
 * /proc/self/stat). Deleting a variable from `process.env` (unsetenv) only drops libc's pointer to
 * its bytes; the bytes stay, and anyone allowed to read that file — the same user, so the Bash tool
 * and every unsandboxed plugin — reads the secret there. A process may write its own memory
 * through /proc/self/mem (it always passes the kernel's access check on itself, as root too), so
 * once a variable is unset its `NAME=value` bytes are overwritten with NULs. Nothing points at them
 * any more, so nothing in the process notices.
 *
 * Where that is not possible (not Linux, /proc not mounted, a kernel or security module that
 * refuses the write) the caller gets a warning to log, never a silent pass.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from "node:fs";

export interface EnvironClearing {
  /** Names whose bytes are no longer in the initial environment block. */
  readonly cleared: readonly string[];
  /** Why the block could not be cleared (the secrets stay readable there), when it could not. */
  readonly warning?: string;
}

/** Overwrites the `NAME=value` entries of `names` in the initial environment block with NULs. */
export function clearFromInitialEnvironment(names: readonly string[]): EnvironClearing {
  if (names.length === 0) return { cleared: [] };
  if (process.platform !== "linux") {
    return {
      cleared: [],
      warning: `only Linux lets a process clear its initial environment; ${names.join(", ")} stay readable by same-user processes`,
    };
  }
  const wanted = new Set(names);
  let fd: number | undefined;
  try {
    const { start, end } = environBounds();
    const block = Buffer.alloc(end - start);
    fd = openSync("/proc/self/mem", "r+");
    readSync(fd, block, 0, block.length, start);
    const cleared = new Set<string>();
    for (const entry of entries(block)) {
      if (!wanted.has(entry.name)) continue;
      writeSync(fd, Buffer.alloc(entry.length), 0, entry.length, start + entry.offset);
      cleared.add(entry.name);
    }
    // Check from the reader's side: what the kernel now shows must hold none of the names.
    const shown = readFileSync("/proc/self/environ");
    const left = [...entries(shown)].filter((entry) => wanted.has(entry.name)).map((entry) => entry.name);
    if (left.length > 0)
      return { cleared: [...cleared], warning: `still in /proc/self/environ: ${left.join(", ")}` };
    return { cleared: [...cleared] };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return {
      cleared: [],
      warning: `cannot clear the initial environment through /proc/self/mem (${reason}); ${names.join(", ")} stay readable in /proc/${process.pid}/environ by same-user processes`,
    };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The initial environment block's address range, from /proc/self/stat. */
function environBounds(): { start: number; end: number } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // The command name (field 2) may hold spaces and parentheses; fields count from after its ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) {
    throw new Error(`unreadable environment bounds in /proc/self/stat (${fields[47]}, ${fields[48]})`);
  }
  return { start, end };
}

/** The `NAME=value` entries of an environment block with their offsets and lengths (NUL excluded). */
function* entries(block: Buffer): Generator<{ name: string; offset: number; length: number }> {
  let offset = 0;
  while (offset < block.length) {
    let end = block.indexOf(0, offset);
    if (end === -1) end = block.length;
    if (end > offset) {
      const equals = block.indexOf(0x3d, offset);
      const nameEnd = equals === -1 || equals > end ? end : equals;
      yield { name: block.toString("utf8", offset, nameEnd), offset, length: end - offset };
    }
    offset = end + 1;
  }
}
