/**
 * TOML text → plain data (smol-toml), plus key positions.
 *
 * smol-toml reports where a syntax error is but keeps no positions for valid documents, so a small
 * scanner walks the (already validated) text once and records where every key, table header,
 * array-of-tables entry, array element and value starts. It only has to follow valid TOML, which
 * keeps it simple: strings are skipped whole so their contents are never mistaken for keys.
 */
import { createRequire } from "node:module";
import type * as SmolToml from "smol-toml";
import { ConfigError, type PathSegment } from "./errors.js";
import type { Locator, ParsedSource, SourcePos } from "./locate.js";

type TomlLibrary = typeof SmolToml;

/** What require() loads: the bundle script rewrites this line to bundle/smol-toml.cjs. */
const TOML_REQUEST = "smol-toml";

let held: WeakRef<TomlLibrary> | undefined;

/**
 * smol-toml, loaded for a parse and not kept after, the way config/yaml-library.ts loads yaml
 * (its header says why): an idle daemon parsed its TOML files at start and parses again only on a
 * reload or an edit, and an imported ES module would stay loaded for the process's life. Held
 * through a WeakRef and taken out of require's cache, so a collection after the work frees it.
 * Each parse uses one copy's `TomlDate` and `TomlError` throughout, so `instanceof` stays right.
 */
function tomlLibrary(): TomlLibrary {
  const alive = held?.deref();
  if (alive !== undefined) return alive;
  const require = createRequire(import.meta.url);
  const before = new Set(Object.keys(require.cache));
  const loaded = require(TOML_REQUEST) as TomlLibrary;
  for (const key of Object.keys(require.cache)) if (!before.has(key)) delete require.cache[key];
  held = new WeakRef(loaded);
  return loaded;
}

/** Parses TOML into plain data (dates become ISO strings); throws a `ConfigError` on a syntax error. */
export function parseTomlSource(text: string, file: string | undefined): ParsedSource {
  const { parse, TomlDate, TomlError } = tomlLibrary();
  let data: unknown;
  try {
    data = plainDates(parse(text), TomlDate);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const firstLine = error.message.split("\n", 1)[0] ?? error.message;
    throw ConfigError.of(
      {
        code: "parse",
        message: firstLine.replace(/^Invalid TOML document: /, ""),
        ...(file === undefined ? {} : { file }),
        line: error.line,
        column: error.column,
      },
      { cause: error },
    );
  }
  const positions = scanTomlPositions(text);
  const locate: Locator = (path, target) => {
    for (let length = path.length; length >= 0; length -= 1) {
      const entry = positions.get(pathKey(path.slice(0, length)));
      if (entry === undefined) continue;
      const wantValue = target === "value" && length === path.length;
      return (wantValue ? entry.value : undefined) ?? entry.key ?? entry.value;
    }
    return undefined;
  };
  return { data, locate };
}

/**
 * TOML dates are `TomlDate` objects; config schemas see the ISO text instead, so that one set of
 * zod schemas validates YAML and TOML files alike.
 */
function plainDates(value: unknown, TomlDate: TomlLibrary["TomlDate"]): unknown {
  if (value instanceof TomlDate) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => plainDates(item, TomlDate));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = plainDates(item, TomlDate);
    return out;
  }
  return value;
}

interface PositionEntry {
  key?: SourcePos;
  value?: SourcePos;
  /** Set when a table header or key names this path outright rather than as a dotted prefix. */
  explicit?: boolean;
}

interface KeyPart {
  readonly name: string;
  readonly pos: SourcePos;
}

function pathKey(path: readonly PathSegment[]): string {
  return JSON.stringify(path);
}

/** Exported for tests: where each path of a valid TOML document was written. */
export function scanTomlPositions(text: string): Map<string, PositionEntry> {
  return new TomlPositionScanner(text).run();
}

class TomlPositionScanner {
  private i = 0;
  private line = 1;
  private lineStart = 0;
  private readonly positions = new Map<string, PositionEntry>();
  /** How many `[[name]]` entries each array of tables has so far, keyed by its resolved path. */
  private readonly arrayTableCounts = new Map<string, number>();

  constructor(private readonly text: string) {}

  run(): Map<string, PositionEntry> {
    let table: PathSegment[] = [];
    for (;;) {
      this.skipBlank(true);
      if (this.i >= this.text.length) break;
      const before = this.i;
      if (this.text[this.i] === "[") table = this.header();
      else this.keyValue(table);
      this.skipToLineEnd();
      if (this.i === before) this.advance(1);
    }
    return this.positions;
  }

  private pos(): SourcePos {
    return { line: this.line, column: this.i - this.lineStart + 1 };
  }

  private advance(count: number): void {
    const end = Math.min(this.i + count, this.text.length);
    for (; this.i < end; this.i += 1) {
      if (this.text[this.i] === "\n") {
        this.line += 1;
        this.lineStart = this.i + 1;
      }
    }
  }

  private record(path: readonly PathSegment[], key: SourcePos | undefined, explicit: boolean): void {
    const id = pathKey(path);
    const entry = this.positions.get(id);
    if (entry === undefined) {
      this.positions.set(id, { ...(key === undefined ? {} : { key }), explicit });
    } else if (explicit && !entry.explicit) {
      if (key !== undefined) entry.key = key;
      entry.explicit = true;
    }
  }

  private recordValue(path: readonly PathSegment[], value: SourcePos): void {
    const id = pathKey(path);
    const entry = this.positions.get(id);
    if (entry === undefined) this.positions.set(id, { value });
    else entry.value ??= value;
  }

  /** Skips spaces and tabs, and also newlines and comments when `lines` is set. */
  private skipBlank(lines: boolean): void {
    while (this.i < this.text.length) {
      const c = this.text[this.i];
      if (c === " " || c === "\t") this.advance(1);
      else if (lines && (c === "\n" || c === "\r")) this.advance(1);
      else if (lines && c === "#") this.skipComment();
      else break;
    }
  }

  private skipComment(): void {
    while (this.i < this.text.length && this.text[this.i] !== "\n") this.advance(1);
  }

  /** After a key/value or header: drop the rest of the line (a comment, or nothing). */
  private skipToLineEnd(): void {
    this.skipBlank(false);
    if (this.text[this.i] === "#") this.skipComment();
  }

  private header(): PathSegment[] {
    const headerPos = this.pos();
    const arrayOfTables = this.text.startsWith("[[", this.i);
    this.advance(arrayOfTables ? 2 : 1);
    const parts = this.keyParts();
    this.skipBlank(false);
    this.advance(arrayOfTables ? 2 : 1);
    const resolved: PathSegment[] = [];
    for (const [index, part] of parts.entries()) {
      resolved.push(part.name);
      const last = index === parts.length - 1;
      this.record(resolved, part.pos, last);
      // A header that goes through an array of tables lands in its latest entry.
      const count = this.arrayTableCounts.get(pathKey(resolved));
      if (count !== undefined && !(last && arrayOfTables)) resolved.push(count - 1);
    }
    if (arrayOfTables) {
      const id = pathKey(resolved);
      const count = this.arrayTableCounts.get(id) ?? 0;
      this.arrayTableCounts.set(id, count + 1);
      resolved.push(count);
      this.record(resolved, headerPos, true);
    }
    return resolved;
  }

  private keyValue(table: readonly PathSegment[]): void {
    const parts = this.keyParts();
    if (parts.length === 0) return;
    const path = [...table];
    for (const [index, part] of parts.entries()) {
      path.push(part.name);
      this.record(path, part.pos, index === parts.length - 1);
    }
    this.skipBlank(false);
    if (this.text[this.i] !== "=") return;
    this.advance(1);
    this.skipBlank(false);
    this.value(path);
  }

  private keyParts(): KeyPart[] {
    const parts: KeyPart[] = [];
    for (;;) {
      this.skipBlank(false);
      const pos = this.pos();
      const c = this.text[this.i];
      let name: string;
      if (c === '"') name = this.basicString();
      else if (c === "'") name = this.literalString();
      else name = this.bareKey();
      if (name === "" && c !== '"' && c !== "'") return parts;
      parts.push({ name, pos });
      this.skipBlank(false);
      if (this.text[this.i] !== ".") return parts;
      this.advance(1);
    }
  }

  private bareKey(): string {
    const start = this.i;
    while (this.i < this.text.length && /[A-Za-z0-9_-]/.test(this.text[this.i] as string)) this.advance(1);
    return this.text.slice(start, this.i);
  }

  private value(path: readonly PathSegment[]): void {
    this.recordValue(path, this.pos());
    const c = this.text[this.i];
    if (this.text.startsWith('"""', this.i)) this.multilineString('"""');
    else if (this.text.startsWith("'''", this.i)) this.multilineString("'''");
    else if (c === '"') this.basicString();
    else if (c === "'") this.literalString();
    else if (c === "[") this.array(path);
    else if (c === "{") this.inlineTable(path);
    else this.scalar();
  }

  private array(path: readonly PathSegment[]): void {
    this.advance(1);
    for (let index = 0; ; index += 1) {
      this.skipBlank(true);
      if (this.i >= this.text.length) return;
      if (this.text[this.i] === "]") {
        this.advance(1);
        return;
      }
      const before = this.i;
      this.value([...path, index]);
      this.skipBlank(true);
      if (this.text[this.i] === ",") this.advance(1);
      if (this.i === before) this.advance(1);
    }
  }

  private inlineTable(path: readonly PathSegment[]): void {
    this.advance(1);
    for (;;) {
      this.skipBlank(true);
      if (this.i >= this.text.length) return;
      if (this.text[this.i] === "}") {
        this.advance(1);
        return;
      }
      const before = this.i;
      this.keyValue(path);
      this.skipBlank(true);
      if (this.text[this.i] === ",") this.advance(1);
      if (this.i === before) this.advance(1);
    }
  }

  /** Numbers, booleans, dates (which may contain one space): everything up to a delimiter. */
  private scalar(): void {
    while (this.i < this.text.length && !/[,\]}#\r\n]/.test(this.text[this.i] as string)) this.advance(1);
  }

  /** Skips a `"..."` string and returns its decoded text (keys may be quoted). */
  private basicString(): string {
    this.advance(1);
    let out = "";
    while (this.i < this.text.length && this.text[this.i] !== '"') {
      if (this.text[this.i] === "\\") {
        out += this.escape();
      } else {
        out += this.text[this.i];
        this.advance(1);
      }
    }
    this.advance(1);
    return out;
  }

  private escape(): string {
    const next = this.text[this.i + 1] ?? "";
    const simple: Record<string, string> = {
      b: "\b",
      t: "\t",
      n: "\n",
      f: "\f",
      r: "\r",
      e: "\x1b",
      '"': '"',
      "\\": "\\",
    };
    const mapped = simple[next];
    if (mapped !== undefined) {
      this.advance(2);
      return mapped;
    }
    const width = next === "u" ? 4 : next === "U" ? 8 : next === "x" ? 2 : 0;
    const hex = this.text.slice(this.i + 2, this.i + 2 + width);
    this.advance(2 + width);
    const code = Number.parseInt(hex, 16);
    return width > 0 && Number.isFinite(code) ? String.fromCodePoint(code) : next;
  }

  private literalString(): string {
    this.advance(1);
    const start = this.i;
    while (this.i < this.text.length && this.text[this.i] !== "'") this.advance(1);
    const out = this.text.slice(start, this.i);
    this.advance(1);
    return out;
  }

  private multilineString(delimiter: '"""' | "'''"): void {
    this.advance(3);
    while (this.i < this.text.length && !this.text.startsWith(delimiter, this.i)) {
      this.advance(delimiter === '"""' && this.text[this.i] === "\\" ? 2 : 1);
    }
    this.advance(3);
    // Up to two quotes right before the closing delimiter belong to the content (`""""` ends it).
    for (let extra = 0; extra < 2 && this.text[this.i] === delimiter[0]; extra += 1) this.advance(1);
  }
}
