/**
 * Runs a zod schema over config data and turns its issues into config issues worded for operators:
 * `expected one of anthropic|openai, got "antropic"` rather than zod's developer-facing defaults.
 *
 * Only zod's default wording is replaced: a message the schema author wrote (`{ error: "..." }`,
 * `.refine(..., "...")`) wins, because zod consults a schema's own error before the parse-level
 * error map used here.
 */
import { z } from "zod";
import type { ConfigIssue, PathSegment } from "./errors.js";
import { schemaIssue } from "./locate.js";

export type SchemaResult<T> = { ok: true; value: T } | { ok: false; issues: ConfigIssue[] };

/** Validates `data`; on failure returns one issue per problem (one per unknown key, too). */
export function validateWithSchema<S extends z.ZodType>(schema: S, data: unknown): SchemaResult<z.output<S>> {
  const suggestions = new Map<string, string>();
  // jitless: zod would compile a parser for each object schema on its first parse and keep it for
  // the process's life; a config document is parsed once per load, so that code was compiled for
  // nothing and held by every idle daemon (issue 15, docs/performance.md).
  const result = schema.safeParse(data, {
    error: (issue) => operatorMessage(issue, suggestions),
    jitless: true,
  });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: result.error.issues.flatMap((issue) => toConfigIssues(issue, suggestions)) };
}

function toConfigIssues(issue: z.core.$ZodIssue, suggestions: ReadonlyMap<string, string>): ConfigIssue[] {
  const path = issue.path.map(toSegment);
  if (issue.code === "unrecognized_keys") {
    // One issue per key, each pointing at that key's own line.
    return issue.keys.map((key) => {
      const keyPath = [...path, key];
      const hint = suggestions.get(JSON.stringify(keyPath));
      return schemaIssue(
        keyPath,
        `unknown key "${key}"${hint === undefined ? "" : ` (did you mean "${hint}"?)`}`,
      );
    });
  }
  return [schemaIssue(path, issue.message)];
}

function toSegment(segment: PropertyKey): PathSegment {
  return typeof segment === "number" ? segment : String(segment);
}

/** The parse-level error map: our wording for the common issues, zod's for the rest. */
function operatorMessage(issue: z.core.$ZodRawIssue, suggestions: Map<string, string>): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return `missing (expected ${issue.expected})`;
      return `expected ${issue.expected}, got ${describeValue(issue.input)}`;
    case "invalid_value": {
      const expected =
        issue.values.length === 1
          ? formatLiteral(issue.values[0])
          : `one of ${issue.values.map(formatLiteral).join("|")}`;
      if (issue.input === undefined) return `missing (expected ${expected})`;
      return `expected ${expected}, got ${describeValue(issue.input)}`;
    }
    case "invalid_union":
      return unionMessage(issue);
    case "unrecognized_keys":
      recordSuggestions(issue, suggestions);
      return undefined;
    default:
      return undefined;
  }
}

/**
 * A union fails with one issue per branch; when every branch simply wanted another type or value
 * the operator needs one line, `expected string or number, got true`, not zod's "Invalid input".
 */
function unionMessage(issue: z.core.$ZodRawIssue<z.core.$ZodIssueInvalidUnion>): string | undefined {
  if (issue.inclusive === false) return undefined;
  if (issue.discriminator !== undefined && issue.options !== undefined) {
    // No branch has this tag; the issue sits on the tag key, `input` is the enclosing object.
    const tag = isRecord(issue.input) ? issue.input[issue.discriminator] : undefined;
    const expected = `one of ${issue.options.map(formatLiteral).join("|")}`;
    return tag === undefined
      ? `missing (expected ${expected})`
      : `expected ${expected}, got ${describeValue(tag)}`;
  }
  const wanted: string[] = [];
  for (const branch of issue.errors) {
    const only = branch.length === 1 ? branch[0] : undefined;
    if (only === undefined || only.path.length > 0) return undefined;
    if (only.code === "invalid_type") wanted.push(only.expected);
    else if (only.code === "invalid_value") wanted.push(...only.values.map(formatLiteral));
    else return undefined;
  }
  if (wanted.length === 0) return undefined;
  const expected = wanted.length === 1 ? wanted[0] : `${wanted.slice(0, -1).join(", ")} or ${wanted.at(-1)}`;
  if (issue.input === undefined) return `missing (expected ${expected})`;
  return `expected ${expected}, got ${describeValue(issue.input)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function recordSuggestions(
  issue: z.core.$ZodRawIssue<z.core.$ZodIssueUnrecognizedKeys>,
  into: Map<string, string>,
) {
  const inst = issue.inst;
  if (!(inst instanceof z.core.$ZodObject)) return;
  const known = Object.keys(inst._zod.def.shape);
  const path = (issue.path ?? []).map(toSegment);
  for (const key of issue.keys) {
    const hint = closestKey(key, known);
    if (hint !== undefined) into.set(JSON.stringify([...path, key]), hint);
  }
}

/** The known key a typo most likely meant, if one is close enough to be worth suggesting. */
function closestKey(typo: string, known: readonly string[]): string | undefined {
  const limit = Math.min(2, Math.floor(typo.length / 3) + 1);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const distance = editDistance(typo.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Damerau-Levenshtein (optimal string alignment): a swap of two letters counts as one edit. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i += 1) d[i * cols] = i;
  for (let j = 0; j < cols; j += 1) d[j] = j;
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, at(i - 2, j - 2) + 1);
      d[i * cols + j] = value;
    }
  }
  return at(a.length, b.length);
}

const BARE_LITERAL = /^[A-Za-z0-9_./:@+-]+$/;

function formatLiteral(value: unknown): string {
  if (typeof value === "string") return BARE_LITERAL.test(value) ? value : JSON.stringify(value);
  if (typeof value === "bigint") return `${value}`;
  return String(value);
}

/** How a wrong value is shown after "got": strings quoted, containers named rather than dumped. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
    return JSON.stringify(shown);
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  return String(value);
}
