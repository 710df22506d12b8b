/**
 * The contract between a format's parser and the loader: a parsed value plus a way to find where
 * a path into that value was written in the source.
 */
import type { PathSegment } from "./errors.js";

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
