/**
 * The contract between a format's parser and the loader: a parsed value plus a way to find where
 * a path into that value was written in the source.
 */
import { ConfigError, type ConfigIssue, formatKeyPath, type PathSegment, sortIssues } from "./errors.js";

/** A 1-based line and column (columns count UTF-16 code units, as editors on the JS side do). */
export interface SourcePos {
  readonly line: number;
  readonly column: number;
}

/**
 * Finds where `path` was written: `"key"` asks for the key that introduces the value (where schema
 * problems are reported), `"value"` for the value itself (where a `${...}` sits). A path that does
 * not exist in the source (a missing required key, say) resolves to its nearest written ancestor.
 */
export type Locator = (path: readonly PathSegment[], target: "key" | "value") => SourcePos | undefined;

/** A config file's text, parsed into plain data, with positions for error reporting. */
export interface ParsedSource {
  readonly data: unknown;
  readonly locate: Locator;
}

/** A schema problem at `path`, before its position is known (see `locatedError`). */
export function schemaIssue(path: readonly PathSegment[], message: string): ConfigIssue {
  return { code: "schema", message, path, keyPath: formatKeyPath(path) };
}

/** The issues placed at their keys' lines in `file`, sorted, as one ConfigError. */
export function locatedError(issues: readonly ConfigIssue[], locate: Locator, file: string): ConfigError {
  return new ConfigError(
    sortIssues(
      issues.map((issue) => {
        const pos = locate(issue.path ?? [], "key");
        return { ...issue, file, ...(pos === undefined ? {} : { line: pos.line, column: pos.column }) };
      }),
    ),
  );
}
