/**
 * The files of a config directory as the daemon sees them: which of its known files are present,
 * what else is lying there (a warning, not an error: editors and operators leave notes), and one
 * known file read and validated, keeping the means to point at any of its keys afterwards so the
 * checks that span files can report `file:line:col` too.
 */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { z } from "zod";
import {
  ConfigError,
  type ConfigIssue,
  configFormatOf,
  type Env,
  formatKeyPath,
  listConfigFiles,
  type PathSegment,
  parseConfigText,
} from "../../config/index.js";
import type { Locator } from "../../config/locate.js";
import { parseTomlSource } from "../../config/toml-source.js";
import { parseYamlSource } from "../../config/yaml-source.js";

/** The files nexo reads, by name without extension (`.yaml`, `.yml` or `.toml`). */
export const KNOWN_FILES = [
  "agents",
  "llm",
  "broker",
  "plugins",
  "mcp",
  "memory",
  "tenants",
  "daemon",
  "appserver",
  "extensions",
] as const;
export type KnownFile = (typeof KNOWN_FILES)[number];

/** Something worth telling the operator that does not stop the config from being used. */
export interface ConfigWarning {
  /** The file concerned, as the caller named the directory. */
  readonly file: string;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
  readonly keyPath?: string;
}

export interface DirScan {
  /** Known file → its path. */
  readonly files: Partial<Record<KnownFile, string>>;
  readonly issues: ConfigIssue[];
  readonly warnings: ConfigWarning[];
}

const isKnown = (name: string): name is KnownFile => (KNOWN_FILES as readonly string[]).includes(name);

/** Sorts the directory's config files into known ones, duplicates (an error) and strangers (a warning). */
export async function scanConfigDir(dir: string): Promise<DirScan> {
  const files: Partial<Record<KnownFile, string>> = {};
  const issues: ConfigIssue[] = [];
  const warnings: ConfigWarning[] = [];
  for (const path of await listConfigFiles(dir)) {
    const name = basename(path, extname(path));
    if (!isKnown(name)) {
      warnings.push({
        file: path,
        message: `not a file nexo reads, ignored (known: ${KNOWN_FILES.map((known) => `${known}.yaml`).join(", ")})`,
      });
      continue;
    }
    const first = files[name];
    if (first === undefined) files[name] = path;
    else
      issues.push({
        code: "io",
        file: path,
        message: `${basename(first)} is here too; keep one of the two (nexo would not know which to read)`,
      });
  }
  return { files, issues, warnings };
}

export type FileResult<T> =
  | { readonly ok: true; readonly file: string; readonly value: T; readonly locate: Locator }
  | { readonly ok: false; readonly file: string; readonly issues: readonly ConfigIssue[] };

/**
 * Reads, substitutes and validates one known file; problems are returned, not thrown. `text`, when
 * given, is used instead of the file's content (an edit not yet written).
 */
export async function readConfigFile<S extends z.ZodType>(
  file: string,
  schema: S,
  env: Env,
  text?: string,
): Promise<FileResult<z.output<S>>> {
  // scanConfigDir only hands over names with a config extension.
  const format = configFormatOf(file) ?? "yaml";
  if (text === undefined) {
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { ok: false, file, issues: [{ code: "io", file, message: `cannot read: ${reason}` }] };
    }
  }
  try {
    const value = parseConfigText(text, format, schema, { file, env });
    // The text parsed a moment ago, so parsing it again for positions cannot fail.
    const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const parsed = format === "yaml" ? parseYamlSource(source, file) : parseTomlSource(source, file);
    return { ok: true, file, value, locate: parsed.locate };
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, file, issues: error.issues };
    throw error;
  }
}

/** A problem found by a check that spans files, placed at `path`'s key in `file`. */
export function issueAt(
  file: string,
  locate: Locator,
  path: readonly PathSegment[],
  message: string,
): ConfigIssue {
  const pos = locate(path, "key");
  return {
    code: "schema",
    file,
    message,
    path,
    keyPath: formatKeyPath(path),
    ...(pos === undefined ? {} : { line: pos.line, column: pos.column }),
  };
}

/** The same, as a warning. */
export function warningAt(
  file: string,
  locate: Locator,
  path: readonly PathSegment[],
  message: string,
): ConfigWarning {
  const pos = locate(path, "key");
  return {
    file,
    message,
    keyPath: formatKeyPath(path),
    ...(pos === undefined ? {} : { line: pos.line, column: pos.column }),
  };
}
