/**
 * Writing config files safely.
 *
 * `writeFileAtomic` (atomic-write.ts) never exposes a partial file.
 *
 * `editYamlFile` is the only way the daemon changes a YAML config: read, let the caller edit the
 * yaml Document, optionally validate, write atomically, all under a per-path lock. Comments, key
 * order and the operator's formatting of untouched lines survive (see yaml-layout.ts).
 */
import { readFile } from "node:fs/promises";
import type { Document, ToStringOptions } from "yaml";
import type { z } from "zod";
import { resolveTarget, writeFileAtomic } from "./atomic-write.js";
import { ConfigError } from "./errors.js";
import { parseConfigText } from "./load.js";
import { withPathLock } from "./path-lock.js";
import type { Env } from "./substitute.js";
import { detectYamlStyle, mergeLayout } from "./yaml-layout.js";
import { yamlLibrary } from "./yaml-library.js";
import { parseYamlDocument, YAML_OPTIONS } from "./yaml-source.js";

export interface EditYamlOptions<S extends z.ZodType> {
  /** Checked against the edited document (after `${...}` substitution) before anything is written. */
  readonly validate?: { readonly schema: S; readonly env: Env };
  /** Start from an empty document when the file does not exist (otherwise that is an `io` error). */
  readonly createIfMissing?: boolean;
  /**
   * Runs on the exact text about to be written, after `validate`, still holding the file's lock;
   * throwing refuses the edit and leaves the file as it was. For checks that need more than this
   * file, e.g. validating a whole config directory as it would be with this text.
   */
  readonly check?: (text: string) => void | Promise<void>;
}

export interface EditYamlResult {
  /** False when the edit left the document as it was; nothing was written then. */
  readonly changed: boolean;
  /** The file's text after the edit (the unchanged text when `changed` is false). */
  readonly text: string;
}

/**
 * Edits a YAML config file in place. `edit` receives the parsed yaml Document (use `setIn`,
 * `deleteIn`, `addIn`, ...). If `validate` is given and the result does not pass, a `ConfigError`
 * is thrown and the file is left byte-identical; a throwing `check` leaves it alone too. Calls on
 * the same path in this process run one after another, each seeing the previous one's result.
 */
export function editYamlFile<S extends z.ZodType>(
  path: string,
  edit: (doc: Document.Parsed) => void | Promise<void>,
  options: EditYamlOptions<S> = {},
): Promise<EditYamlResult> {
  return withConfigFileLock(path, (target) => editLocked(path, target, edit, options));
}

/**
 * Runs `task` holding the same per-file lock `editYamlFile` takes, keyed by the real file behind
 * `path` (so two symlinks to one file share it). Other read-modify-write cycles on config files,
 * a TOML edit say, use this to stay serialized with YAML edits of the same file.
 */
export async function withConfigFileLock<T>(path: string, task: (target: string) => Promise<T>): Promise<T> {
  const target = await resolveTarget(path);
  return withPathLock(target, () => task(target));
}

async function editLocked<S extends z.ZodType>(
  path: string,
  target: string,
  edit: (doc: Document.Parsed) => void | Promise<void>,
  options: EditYamlOptions<S>,
): Promise<EditYamlResult> {
  const source = await readSource(path, target, options.createIfMissing === true);
  const { doc } = parseYamlDocument(source, path);
  const style = detectYamlStyle(source);
  const before = doc.toString(style);
  await edit(doc);
  const after = doc.toString(style);
  if (after === before) return { changed: false, text: source };

  const text = keepLayout(source, before, after, style);
  if (options.validate !== undefined) {
    // Validate the exact text about to be written, so what passes here is what the loader will read.
    parseConfigText(text, "yaml", options.validate.schema, { file: path, env: options.validate.env });
  }
  await options.check?.(text);
  await writeFileAtomic(target, text);
  return { changed: true, text };
}

/** The merged text if it provably means the same as the edited document, else the plain rendering. */
function keepLayout(source: string, before: string, after: string, style: ToStringOptions): string {
  const merged = mergeLayout(source, before, after);
  if (merged !== undefined) {
    const reparsed = yamlLibrary().parseDocument(merged, YAML_OPTIONS);
    if (reparsed.errors.length === 0 && reparsed.toString(style) === after) return merged;
  }
  // The rendering is always right, only less faithful to the layout; keep at least the line endings.
  return source.includes("\r\n") ? after.replaceAll("\n", "\r\n") : after;
}

async function readSource(path: string, target: string, createIfMissing: boolean): Promise<string> {
  try {
    return await readFile(target, "utf8");
  } catch (error) {
    if (createIfMissing && (error as NodeJS.ErrnoException).code === "ENOENT") return "";
    const reason = error instanceof Error ? error.message : String(error);
    throw ConfigError.of({ code: "io", file: path, message: `cannot read: ${reason}` }, { cause: error });
  }
}

export { type WriteFileAtomicOptions, writeFileAtomic, writeFileAtomicIn } from "./atomic-write.js";
