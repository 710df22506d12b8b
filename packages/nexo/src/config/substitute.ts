/**
 * `${...}` substitution in config string values.
 *
 * Runs on the parsed value, never on the raw text: a secret containing `:` or `#` cannot break the
 * YAML/TOML syntax, placeholders in comments are never expanded, and keys are left alone. Forms:
 *
 *   ${VAR}              the variable's value; an error if it is unset (set-but-empty is fine)
 *   ${VAR:-default}     `default` when VAR is unset or empty (as in the shell)
 *   ${VAR-default}      `default` only when VAR is unset (as in the shell)
 *   ${file:path}        the file's contents minus one trailing newline; relative paths resolve
 *                       against the config file's directory
 *   $${...}             a literal `${...}` (the escape; `$${` always yields `${`)
 *
 * Defaults and file paths may themselves contain placeholders (`${A:-${B}}`); a default is only
 * expanded when it is used. Values that come from the environment or a file are inserted verbatim,
 * never expanded again, so a secret that happens to contain `${` stays intact.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ConfigError, type ConfigIssue, formatKeyPath, type PathSegment } from "./errors.js";

/** The variables substitution may read; injected so that nothing here depends on `process.env`. */
export type Env = Readonly<Record<string, string | undefined>>;

export interface SubstitutionOptions {
  readonly env: Env;
  /** Directory that relative `${file:...}` paths resolve against (the config file's directory). */
  readonly baseDir: string;
}

/** A string value whose placeholders could not all be expanded. */
export interface SubstitutionFailure {
  readonly path: readonly PathSegment[];
  readonly messages: readonly string[];
}

const VARIABLE = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([\s\S]*))?$/;
const FILE_PREFIX = "file:";

interface Expansion {
  text: string;
  errors: string[];
}

/** Returns `text` with `${` written as `$${`, so that a later load reads it back unchanged. */
export function escapeSubstitution(text: string): string {
  // A replacer function, because in a replacement string "$$" would itself mean a single "$".
  return text.replaceAll("${", () => "$${");
}

/** Expands every placeholder in one string; throws a `ConfigError` listing each one that failed. */
export function substituteString(text: string, options: SubstitutionOptions): string {
  const result = expand(text, options);
  if (result.errors.length > 0) {
    throw new ConfigError(result.errors.map((message) => ({ code: "substitution", message })));
  }
  return result.text;
}

/**
 * Expands placeholders in every string inside `value` (arrays and plain objects are walked; keys
 * are not touched). Never throws: failures are returned with their path, and the failing strings
 * are kept as written so the caller can still validate the rest.
 */
export function substituteValues(
  value: unknown,
  options: SubstitutionOptions,
): { value: unknown; failures: SubstitutionFailure[] } {
  const failures: SubstitutionFailure[] = [];
  const walk = (node: unknown, path: PathSegment[]): unknown => {
    if (typeof node === "string") {
      const result = expand(node, options);
      if (result.errors.length === 0) return result.text;
      failures.push({ path: [...path], messages: result.errors });
      return node;
    }
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...path, index]));
    if (isPlainObject(node)) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node)) out[key] = walk(item, [...path, key]);
      return out;
    }
    return node;
  };
  return { value: walk(value, []), failures };
}

/** Turns failures into issues (without positions; the loader adds those). */
export function substitutionIssues(failures: readonly SubstitutionFailure[]): ConfigIssue[] {
  return failures.flatMap((failure) =>
    failure.messages.map((message) => ({
      code: "substitution" as const,
      message,
      path: failure.path,
      keyPath: formatKeyPath(failure.path),
    })),
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function expand(text: string, options: SubstitutionOptions): Expansion {
  let out = "";
  const errors: string[] = [];
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf("$", i);
    if (dollar === -1) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, dollar);
    if (text.startsWith("$${", dollar)) {
      out += "${";
      i = dollar + 3;
      continue;
    }
    if (!text.startsWith("${", dollar)) {
      out += "$";
      i = dollar + 1;
      continue;
    }
    const close = matchingBrace(text, dollar + 2);
    if (close === -1) {
      errors.push(`unterminated placeholder ${quoteSnippet(text.slice(dollar))}: missing "}"`);
      out += text.slice(dollar);
      break;
    }
    const body = text.slice(dollar + 2, close);
    const resolved = resolvePlaceholder(body, options);
    if (resolved.errors.length > 0) errors.push(...resolved.errors);
    out += resolved.text;
    i = close + 1;
  }
  return { text: out, errors };
}

/** Index of the `}` closing a placeholder whose body starts at `start`, counting nested `${`. */
function matchingBrace(text: string, start: number): number {
  let depth = 1;
  let j = start;
  while (j < text.length) {
    if (text.startsWith("$${", j)) {
      j += 3;
    } else if (text.startsWith("${", j)) {
      depth += 1;
      j += 2;
    } else if (text[j] === "}") {
      depth -= 1;
      if (depth === 0) return j;
      j += 1;
    } else {
      j += 1;
    }
  }
  return -1;
}

function resolvePlaceholder(body: string, options: SubstitutionOptions): Expansion {
  const written = "${" + body + "}";
  if (body.startsWith(FILE_PREFIX))
    return readFileReference(body.slice(FILE_PREFIX.length), written, options);
  const match = VARIABLE.exec(body);
  if (match === null) {
    const problem = body === "" ? "empty placeholder" : `invalid placeholder ${quoteSnippet(written)}`;
    return {
      text: written,
      errors: [
        `${problem}: expected \${NAME}, \${NAME:-default} or \${file:path} (write $\${...} for a literal)`,
      ],
    };
  }
  const name = match[1] as string;
  const operator = match[2];
  const value = options.env[name];
  if (operator === undefined) {
    if (value === undefined) {
      return { text: written, errors: [`environment variable ${name} is not set (used as ${written})`] };
    }
    return { text: value, errors: [] };
  }
  const useDefault = value === undefined || (operator === ":-" && value === "");
  if (!useDefault) return { text: value, errors: [] };
  return expand(match[3] ?? "", options);
}

function readFileReference(rawPath: string, written: string, options: SubstitutionOptions): Expansion {
  const path = expand(rawPath, options);
  if (path.errors.length > 0) return { text: written, errors: path.errors };
  if (path.text === "") return { text: written, errors: [`empty file path in ${written}`] };
  const absolute = isAbsolute(path.text) ? path.text : resolve(options.baseDir, path.text);
  try {
    const contents = readFileSync(absolute, "utf8");
    return { text: stripOneTrailingNewline(contents), errors: [] };
  } catch (error) {
    return {
      text: written,
      errors: [`cannot read ${absolute} (used as ${written}): ${describeFsError(error)}`],
    };
  }
}

function stripOneTrailingNewline(text: string): string {
  if (text.endsWith("\r\n")) return text.slice(0, -2);
  if (text.endsWith("\n")) return text.slice(0, -1);
  return text;
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ENOENT":
      return "no such file (ENOENT)";
    case "EACCES":
    case "EPERM":
      return `permission denied (${code})`;
    case "EISDIR":
      return "is a directory (EISDIR)";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

function quoteSnippet(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
