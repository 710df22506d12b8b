/**
 * Writing a scaffold (`nexo plugin new`, `nexo microapp new`) into a new directory: refuse a
 * directory that already holds files (nothing is overwritten), write each file, make the
 * executables executable.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Why `target` cannot receive a scaffold, or undefined when it is missing or empty. */
export function occupied(target: string): string | undefined {
  return existsSync(target) && readdirSync(target).length > 0
    ? `${target} exists and is not empty; nothing was written`
    : undefined;
}

/** Writes `files` (path relative to `target` → content); the ones in `executables` get mode 755. */
export function writeScaffold(
  target: string,
  files: Record<string, string>,
  executables: ReadonlySet<string> = new Set(),
): void {
  for (const [file, text] of Object.entries(files)) {
    const path = join(target, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    if (executables.has(file)) chmodSync(path, 0o755);
  }
}

/** `target` as the user should type it: relative to here when below here, else absolute. */
export function shownPath(target: string): string {
  const here = relative(process.cwd(), target);
  return here.startsWith("..") ? target : here || ".";
}
