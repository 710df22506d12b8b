/**
 * Errors raised while reading, substituting, validating or writing a config file.
 *
 * One `ConfigError` can carry several problems (`issues`): an operator who fixes a file should see
 * every mistake in it at once instead of one per restart. Each issue reads like a compiler
 * diagnostic, `agents.yaml:14:7: agents[2].model.provider: expected one of anthropic|openai,
 * got "antropic"`, so editors and terminals can jump to the spot.
 */
/** What went wrong: the text is not YAML/TOML, a value breaks the schema, a `${...}` failed, or the disk did. */
export type ConfigErrorCode = "parse" | "schema" | "substitution" | "io";

/** One step of a path into a config value: an object key or an array index. */
export type PathSegment = string | number;

/** One problem found in a config file. Positions are 1-based; absent when unknown. */
export interface ConfigIssue {
  readonly code: ConfigErrorCode;
  /** The problem alone, without position or key path (e.g. `expected string, got 42`). */
  readonly message: string;
  /** The file as the caller named it; absent for in-memory text without a name. */
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  /** Where in the value, as segments (`["agents", 2, "model"]`). */
  readonly path?: readonly PathSegment[];
  /** `path` rendered for humans (`agents[2].model`); absent for problems not tied to a key. */
  readonly keyPath?: string;
}

/**
 * Renders a path the way a reader would write it: `agents[2].model.provider`, `servers["a.b"].url`.
 * It is `@nexo/wire`'s path formatter, the one every schema failure uses, so a config error and a
 * -32602 name a place the same way.
 */
export { formatIssuePath as formatKeyPath } from "@nexo/wire";

/** `file:line:column: keyPath: message`, leaving out the parts that are unknown. */
export function formatIssue(issue: ConfigIssue): string {
  let where = issue.file ?? "";
  if (issue.line !== undefined) {
    where += `${where === "" ? "line " : ":"}${issue.line}`;
    if (issue.column !== undefined) where += `:${issue.column}`;
  }
  const parts = [where, issue.keyPath, issue.message].filter((part) => part !== undefined && part !== "");
  return parts.join(": ");
}

/** Orders issues as they appear in the file, so a reader can fix them top to bottom. */
export function sortIssues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const rank = (issue: ConfigIssue): [number, number] => [
    issue.line ?? Number.MAX_SAFE_INTEGER,
    issue.column ?? Number.MAX_SAFE_INTEGER,
  ];
  return issues
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => {
      const [la, ca] = rank(a.issue);
      const [lb, cb] = rank(b.issue);
      return la - lb || ca - cb || a.index - b.index;
    })
    .map((entry) => entry.issue);
}

/**
 * A config file could not be used. The top-level `code`/`file`/`line`/`column`/`keyPath` are those
 * of the first issue; `issues` holds all of them, and the message lists each on its own line.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly code: ConfigErrorCode;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly keyPath: string | undefined;
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], options?: ErrorOptions) {
    const first = issues[0];
    if (first === undefined) throw new TypeError("ConfigError needs at least one issue");
    super(issues.map(formatIssue).join("\n"), options);
    this.issues = issues;
    this.code = first.code;
    this.file = first.file;
    this.line = first.line;
    this.column = first.column;
    this.keyPath = first.keyPath;
  }

  /** A single-issue error, for the common case of one thing going wrong. */
  static of(issue: ConfigIssue, options?: ErrorOptions): ConfigError {
    return new ConfigError([issue], options);
  }

  /** The same text as the message: one `file:line:col: keyPath: problem` line per issue. */
  override toString(): string {
    return this.message;
  }
}
