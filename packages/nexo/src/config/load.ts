/**
 * Loading a config file: read → parse (YAML or TOML) → substitute `${...}` → validate with the
 * caller's zod schema → typed value. Every problem found on the way is reported with the line and
 * column of the key it concerns, all at once.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, extname, join, resolve } from "node:path";
import type { z } from "zod";
import { ConfigError, type ConfigIssue, type PathSegment, sortIssues } from "./errors.js";
import type { Locator, ParsedSource } from "./locate.js";
import { validateWithSchema } from "./schema-issues.js";
import { type Env, substituteValues, substitutionIssues } from "./substitute.js";
import { isTempFileName } from "./temp-name.js";
import { parseTomlSource } from "./toml-source.js";
import { parseYamlSource } from "./yaml-source.js";

export type ConfigFormat = "yaml" | "toml";

export interface ParseConfigOptions {
  /** Shown in errors and used to resolve relative `${file:...}` paths; omit for anonymous text. */
  readonly file?: string;
  /** Variables for `${VAR}`; pass `process.env` in the daemon, a literal object in tests. */
  readonly env: Env;
  /** Where relative `${file:...}` paths start; defaults to the file's directory, else the cwd. */
  readonly baseDir?: string;
}

export interface LoadConfigOptions {
  readonly env: Env;
}

const FORMAT_BY_EXTENSION: Readonly<Record<string, ConfigFormat>> = {
  ".yaml": "yaml",
  ".yml": "yaml",
  ".toml": "toml",
};

/** The format a file name implies, or `undefined` for anything that is not a config file. */
export function configFormatOf(path: string): ConfigFormat | undefined {
  return FORMAT_BY_EXTENSION[extname(path).toLowerCase()];
}

/** Reads, substitutes and validates one config file; throws `ConfigError` listing every problem. */
export async function loadConfigFile<S extends z.ZodType>(
  path: string,
  schema: S,
  options: LoadConfigOptions,
): Promise<z.output<S>> {
  const format = configFormatOf(path);
  if (format === undefined) {
    throw ConfigError.of({
      code: "io",
      file: path,
      message: `not a config file name (expected .yaml, .yml or .toml)`,
    });
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw ConfigError.of({ code: "io", file: path, message: `cannot read: ${reason}` }, { cause: error });
  }
  return parseConfigText(text, format, schema, { file: path, env: options.env });
}

/** The in-memory half of `loadConfigFile`: same pipeline, same errors, no disk read. */
export function parseConfigText<S extends z.ZodType>(
  text: string,
  format: ConfigFormat,
  schema: S,
  options: ParseConfigOptions,
): z.output<S> {
  const { file } = options;
  const source = parseSource(stripByteOrderMark(text), format, file);
  const baseDir = options.baseDir ?? (file === undefined ? process.cwd() : dirname(resolve(file)));
  const substituted = substituteValues(source.data, { env: options.env, baseDir });
  const validated = validateWithSchema(schema, substituted.value);

  if (validated.ok && substituted.failures.length === 0) return validated.value;

  // A value whose placeholder failed is still the raw `${...}` text; schema complaints about it
  // (or anything under it) would only repeat the substitution error in a more confusing way.
  const failedPaths = substituted.failures.map((failure) => failure.path);
  const schemaProblems = validated.ok
    ? []
    : validated.issues.filter((issue) => !failedPaths.some((failed) => isWithin(issue.path ?? [], failed)));
  const problems = [
    ...place(substitutionIssues(substituted.failures), source.locate, "value", file),
    ...place(schemaProblems, source.locate, "key", file),
  ];
  throw new ConfigError(sortIssues(problems));
}

/**
 * The config files in a directory, sorted by name: `.yaml`, `.yml` and `.toml` files only. Hidden
 * files are skipped, which covers the writer's temp files (`.<name>.tmp-<pid>-<random>`) that a
 * killed process may leave behind, so a half-written file is never read as config.
 */
export async function listConfigFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names: string[] = [];
  for (const entry of entries) {
    const { name } = entry;
    if (name.startsWith(".") || isTempFileName(name) || configFormatOf(name) === undefined) continue;
    // A symlink counts when it leads to a regular file (a broken link is not config either).
    const isFile = entry.isSymbolicLink()
      ? await stat(join(dir, name)).then(
          (target) => target.isFile(),
          () => false,
        )
      : entry.isFile();
    if (isFile) names.push(name);
  }
  return names.sort().map((name) => join(dir, name));
}

function parseSource(text: string, format: ConfigFormat, file: string | undefined): ParsedSource {
  return format === "yaml" ? parseYamlSource(text, file) : parseTomlSource(text, file);
}

function stripByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function isWithin(path: readonly PathSegment[], prefix: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => path[index] === segment);
}

function place(
  issues: readonly ConfigIssue[],
  locate: Locator,
  target: "key" | "value",
  file: string | undefined,
): ConfigIssue[] {
  return issues.map((issue) => {
    const pos = locate(issue.path ?? [], target);
    return {
      ...issue,
      ...(file === undefined ? {} : { file }),
      ...(pos === undefined ? {} : { line: pos.line, column: pos.column }),
    };
  });
}
