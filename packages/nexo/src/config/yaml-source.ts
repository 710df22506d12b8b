/**
 * YAML text → plain data, with each key's line and column recoverable from the yaml Document's
 * node ranges. The same parse options serve loading and editing, so a file the editor accepts is
 * a file the loader accepts.
 */
import type {
  Document,
  DocumentOptions,
  LineCounter,
  Node,
  ParseOptions,
  SchemaOptions,
  YAMLError,
} from "yaml";
import { ConfigError, type ConfigIssue, type PathSegment } from "./errors.js";
import type { Locator, ParsedSource, SourcePos } from "./locate.js";
import { yamlLibrary } from "./yaml-library.js";

/**
 * YAML 1.2 core schema (so `yes`/`no`/`on` stay strings), duplicate keys rejected, no merge keys
 * (`<<` is an ordinary key, as in the reference daemon), plain error messages (we add positions).
 */
export const YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: "1.2",
  uniqueKeys: true,
  merge: false,
  prettyErrors: false,
};

/** Guards `doc.toJS` against alias bombs ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;

export interface ParsedYamlDocument {
  readonly doc: Document.Parsed;
  readonly lineCounter: LineCounter;
}

/** Parses one YAML document; throws a `ConfigError` with every syntax problem found. */
export function parseYamlDocument(text: string, file: string | undefined): ParsedYamlDocument {
  const { LineCounter, parseDocument } = yamlLibrary();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { ...YAML_OPTIONS, lineCounter });
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((error) => yamlErrorIssue(error, text, lineCounter, file)));
  }
  return { doc, lineCounter };
}

/** Parses YAML into plain data; an empty (or comments-only) document reads as `{}`. */
export function parseYamlSource(text: string, file: string | undefined): ParsedSource {
  const { doc, lineCounter } = parseYamlDocument(text, file);
  let data: unknown;
  try {
    data = doc.contents === null ? {} : doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // toJS only fails on alias misuse (too many, or an alias to a node that encloses it).
    throw ConfigError.of(
      { code: "parse", message: error instanceof Error ? error.message : String(error), ...fileField(file) },
      { cause: error },
    );
  }
  return { data, locate: yamlLocator(doc, lineCounter) };
}

/** Maps paths into the document's value back to where their keys and values were written. */
export function yamlLocator(doc: Document.Parsed, lineCounter: LineCounter): Locator {
  const at = (offset: number): SourcePos => {
    const { line, col } = lineCounter.linePos(offset);
    return { line: Math.max(line, 1), column: Math.max(col, 1) };
  };
  return (path, target) => {
    const { isAlias, isMap, isScalar, isSeq } = yamlLibrary();
    let node: unknown = doc.contents;
    const rootStart = rangeStart(node);
    let found: SourcePos | undefined = rootStart === undefined ? undefined : at(rootStart);
    for (const [index, segment] of path.entries()) {
      const last = index === path.length - 1;
      if (isAlias(node)) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = node.items.find((item) => isScalar(item.key) && keyMatches(item.key.value, segment));
        const keyStart = pair === undefined ? undefined : rangeStart(pair.key);
        if (pair === undefined || keyStart === undefined) return found;
        found = at(keyStart);
        node = pair.value;
        if (last && target === "value") {
          const valueStart = rangeStart(node);
          if (valueStart !== undefined) found = at(valueStart);
        }
      } else if (isSeq(node) && typeof segment === "number") {
        const item = node.items[segment];
        const itemStart = rangeStart(item);
        if (itemStart === undefined) return found;
        found = at(itemStart);
        node = item;
      } else {
        return found;
      }
    }
    return found;
  };
}

function keyMatches(key: unknown, segment: PathSegment): boolean {
  // Plain-object conversion turns every key into a string (`1:` becomes "1"), so compare as strings.
  return String(key) === String(segment);
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range === undefined || range === null ? undefined : range[0];
}

function yamlErrorIssue(
  error: YAMLError,
  text: string,
  lineCounter: LineCounter,
  file: string | undefined,
): ConfigIssue {
  const { line, col } = lineCounter.linePos(error.pos[0]);
  let message = error.message;
  if (error.code === "DUPLICATE_KEY") {
    const key = keyTextAt(text, error.pos[0]);
    message = key === undefined ? "duplicate key" : `duplicate key ${key}`;
  }
  return { code: "parse", message, ...fileField(file), line: Math.max(line, 1), column: Math.max(col, 1) };
}

function fileField(file: string | undefined): { file?: string } {
  return file === undefined ? {} : { file };
}

/** The key written at `offset` as the operator wrote it (quoted if it was not already). */
function keyTextAt(text: string, offset: number): string | undefined {
  const rest = text.slice(offset).split("\n", 1)[0] ?? "";
  const key = /^(.*?)\s*:(?:\s|$)/.exec(rest)?.[1]?.trim();
  if (key === undefined || key === "") return undefined;
  return key.startsWith('"') || key.startsWith("'") ? key : JSON.stringify(key);
}
