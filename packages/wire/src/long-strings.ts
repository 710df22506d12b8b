/**
 * Frames that carry long strings, assembled as bytes.
 *
 * On Node 20 the text of a frame costs more to send than to build once it is long. JSON.stringify
 * escapes at ~2–3 ns a character; the newline appended makes a cons string, which the socket
 * write flattens and encodes to UTF-8 again, and from 64 Ki characters on that write takes a
 * slower path (its exact UTF-8 size first) while a two-byte text of that size is a V8 large
 * object (fresh pages, ~35 page faults each time). So a frame's long strings are cut out and
 * written into the frame's Buffer on their own, everything around them being JSON.stringify's
 * own text:
 * - a string of >= 1,024 characters that is ASCII and holds nothing JSON would escape (`"`, `\`,
 *   U+0000–U+001F) is copied as it is (base64, hex, minified text: ~20 µs for 64 KiB, against
 *   ~190 through the text);
 * - a string of >= 64 Ki characters that needs escaping (source code, prose, anything
 *   non-ASCII) is escaped by JSON.stringify 16 Ki characters at a time, never between the two
 *   halves of a surrogate pair, each piece written into the frame as UTF-8: JSON.stringify's own
 *   escaping, lone surrogates included, in pieces that live and die in the young generation
 *   (64 KiB of source text: ~350 → ~225 µs a frame into a pipe). Shorter ones stay in the text,
 *   where they cost a few µs less (1–48 KiB measured).
 * A frame of at most TEXT_FRAME_MAX_BYTES that turns out all ASCII (the usual 1–16 KiB base64 or
 * hex result) is handed over as text instead, its characters being its bytes (see there).
 * Whatever this encoder is not sure of (a `toJSON`, a class instance, a non-finite number, a
 * BigInt, a deep or wide value) makes it give up, and the caller serializes the whole value with
 * JSON.stringify as before, so the bytes and errors are always JSON.stringify's (a property test
 * pins it).
 */
import { isAscii } from "node:buffer";

/**
 * A frame as the writer hands it to the stream: UTF-8 bytes ending in `\n`, or text of ASCII
 * characters only ending in `\n`, whose bytes are its characters (written as Latin-1: the same
 * bytes, copied without an encoding pass).
 */
export type EncodedFrame = Buffer | string;

/**
 * All-ASCII frames up to this many bytes leave as text. Node writes a string of up to 16 KiB to a
 * pipe or socket from a buffer on its stack (StreamBase::WriteString) and so allocates nothing,
 * where a Buffer of more than 4 KiB (half of Buffer.poolSize) is a fresh ArrayBuffer each time
 * (~1.1 µs at 4 KiB on Node 20, and its share of the garbage collector's work); Latin-1 copies a
 * one-byte string's characters as they are (4 KiB: ~0.13 µs, against ~0.39 for UTF-8). Past
 * 16 KiB the string write allocates too and copies the text twice (flattened, then encoded), so
 * longer frames stay bytes.
 */
export const TEXT_FRAME_MAX_BYTES = 16_384;

/** Strings this long or longer that need no escaping are copied as bytes. */
export const LONG_STRING_CHARS = 1024;

/** Strings this long or longer that need escaping are escaped in pieces (see the file comment). */
export const ESCAPED_STRING_CHARS = 65_536;

/**
 * A long string that needs escaping is stringified this many UTF-16 units at a time: its pieces'
 * JSON (32 KiB two-byte at most) stays below V8's large-object size.
 */
const PIECE_CHARS = 16_384;

/** Values with more nodes than this are left to JSON.stringify: the walk would cost too much. */
const MAX_NODES = 256;
const MAX_DEPTH = 32;

/**
 * True when `value` holds a string this encoder writes on its own (writtenApart) within the first
 * MAX_NODES nodes. A cheap pre-check (no allocation): a frame without one never pays for the
 * assembler.
 */
export function hasLongString(value: unknown): boolean {
  budget = MAX_NODES;
  found = undefined;
  return findLong(value, 0);
}

let budget = 0;

/**
 * The clean long string hasLongString found last (no quote, backslash or line break), so that
 * encodeLongStringFrame, called next on the same value, need not search it again; compared with
 * `===`, which for another string of the same length compares the characters, so it is never
 * wrong, only sometimes not quicker.
 */
let found: string | undefined;

function findLong(value: unknown, depth: number): boolean {
  if (typeof value === "string") return writtenApart(value);
  if (typeof value !== "object" || value === null || depth >= MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (--budget < 0) return false;
      if (findLong(value[i], depth + 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    if (--budget < 0) return false;
    if (findLong((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** Thrown (and caught below) to give up: the caller serializes with JSON.stringify instead. */
const GIVE_UP = Symbol("give up");

/**
 * The frame for `value` ending in `\n` (bytes, or ASCII text: EncodedFrame), byte for byte
 * `JSON.stringify(value)` + `\n`, or undefined when this encoder gives up (see the file comment) and the caller must use
 * JSON.stringify. It gives up on non-finite numbers and BigInts too, so the plain and the strict
 * path each answer them their own way (null, or a TypeError).
 */
export function encodeLongStringFrame(value: unknown): EncodedFrame | undefined {
  const assembler = new Assembler();
  try {
    if (!assembler.value(value, 0, true)) return undefined;
  } catch (error) {
    if (error === GIVE_UP) return undefined;
    throw error;
  } finally {
    found = undefined; // not kept alive past the frame
  }
  return assembler.finish();
}

/**
 * Builds the frame's JSON text with each long string cut out: `texts[i]` is followed by
 * `longs[i]`, the last text by nothing.
 */
class Assembler {
  private text = "";
  private readonly texts: string[] = [];
  private readonly longs: string[] = [];
  /** Whether longs[i] holds a quote, backslash or line break (escaped in pieces at once). */
  private readonly escaping: boolean[] = [];
  private nodes = MAX_NODES;

  /** Appends `value`'s JSON; false when it has none (undefined, a function, a symbol). */
  value(value: unknown, depth: number, inArray: boolean): boolean {
    if (--this.nodes < 0 || depth > MAX_DEPTH) throw GIVE_UP;
    switch (typeof value) {
      case "string": {
        // As writtenApart, with the search for common escapes made once and kept (and not made
        // again for the string hasLongString found just before).
        const escaping = value.length >= LONG_STRING_CHARS && value !== found && hasCommonEscape(value);
        if (value.length >= ESCAPED_STRING_CHARS || (value.length >= LONG_STRING_CHARS && !escaping)) {
          this.texts.push(`${this.text}"`);
          this.longs.push(value);
          this.escaping.push(escaping);
          this.text = '"';
        } else {
          this.text += JSON.stringify(value);
        }
        return true;
      }
      case "number":
        // NaN and ±Infinity: the plain and the strict path differ (null or a TypeError); theirs.
        if (!Number.isFinite(value)) throw GIVE_UP;
        // A finite number's JSON is its ToString (-0 gives "0" either way).
        this.text += `${value}`;
        return true;
      case "boolean":
        this.text += value ? "true" : "false";
        return true;
      case "undefined":
      case "function":
      case "symbol":
        if (inArray) this.text += "null";
        return inArray;
      case "object":
        if (value === null) {
          this.text += "null";
          return true;
        }
        if (typeof (value as { toJSON?: unknown }).toJSON === "function") throw GIVE_UP;
        if (Array.isArray(value)) {
          if (Object.getPrototypeOf(value) !== Array.prototype) throw GIVE_UP;
          this.array(value, depth);
          return true;
        }
        {
          const proto = Object.getPrototypeOf(value);
          if (proto !== Object.prototype && proto !== null) throw GIVE_UP;
        }
        this.object(value as Record<string, unknown>, depth);
        return true;
      default:
        throw GIVE_UP; // bigint: JSON.stringify's own TypeError
    }
  }

  private array(items: unknown[], depth: number): void {
    this.text += "[";
    for (let i = 0; i < items.length; i++) {
      if (i > 0) this.text += ",";
      this.value(items[i], depth + 1, true);
    }
    this.text += "]";
  }

  private object(record: Record<string, unknown>, depth: number): void {
    this.text += "{";
    let first = true;
    // Object.keys: own enumerable string keys in JSON.stringify's order (integer keys first).
    for (const key of Object.keys(record)) {
      const before = this.text;
      this.text += `${first ? "" : ","}${keyJson(key)}:`;
      // undefined, a function or a symbol: JSON.stringify leaves the key out.
      if (this.value(record[key], depth + 1, false)) first = false;
      else this.text = before;
    }
    this.text += "}";
  }

  /** The frame; undefined when the value held no long string after all. */
  finish(): EncodedFrame | undefined {
    const { longs } = this;
    if (longs.length === 0) return undefined;
    if (!this.escaping.includes(true)) {
      const text = this.asciiText();
      if (text !== undefined) return text;
    }
    // Quotes, backslashes and line breaks (code, prose, JSON in a string) are found by the
    // engine's single-character search: such a string is escaped in pieces at once. Any other is
    // first tried as plain ASCII, and escaped in pieces if its bytes say otherwise.
    const escaped = longs.map((long, i) => (this.escaping[i] ? escapedPieces(long) : undefined));
    for (;;) {
      const frame = this.assemble(escaped);
      if (typeof frame !== "number") return frame;
      escaped[frame] = escapedPieces(longs[frame]!);
    }
  }

  /**
   * The frame as text when it is all ASCII and at most TEXT_FRAME_MAX_BYTES: the texts around the
   * long strings (JSON.stringify's) and the long strings as they are, which then need no escaping.
   * Undefined otherwise, for the bytes path to decide.
   */
  private asciiText(): string | undefined {
    const { texts, longs } = this;
    let chars = this.text.length + 1;
    for (let i = 0; i < longs.length; i++) chars += texts[i]!.length + longs[i]!.length;
    if (chars > TEXT_FRAME_MAX_BYTES) return undefined;
    // A string's UTF-8 length equals its length exactly when every unit is below 0x80.
    if (Buffer.byteLength(this.text) !== this.text.length) return undefined;
    let frame = "";
    for (let i = 0; i < longs.length; i++) {
      const text = texts[i]!;
      const long = longs[i]!;
      if (Buffer.byteLength(text) !== text.length || Buffer.byteLength(long) !== long.length)
        return undefined;
      if (hasControlCharacter(long)) return undefined;
      frame += text + long;
    }
    return `${frame}${this.text}\n`;
  }

  /**
   * Writes the frame: `escaped[i]` holds long string i's JSON in pieces, or is undefined to copy
   * the string as it is. Returns the index of a copied string that turned out not to be plain
   * ASCII (non-ASCII, or a control character), for the caller to escape and try again.
   */
  private assemble(escaped: (string[] | undefined)[]): Buffer | number {
    const { texts, longs } = this;
    // Exact for the copied strings (one byte a character), an upper bound for the escaped ones
    // (a UTF-16 unit takes at most 3 bytes); the frame is the written part of the Buffer.
    let bytes = Buffer.byteLength(this.text) + 1;
    for (let i = 0; i < longs.length; i++) {
      bytes += Buffer.byteLength(texts[i]!);
      const pieces = escaped[i];
      if (pieces === undefined) bytes += longs[i]!.length;
      else for (const piece of pieces) bytes += 3 * (piece.length - 2);
    }
    const frame = Buffer.allocUnsafe(bytes);
    let at = 0;
    for (let i = 0; i < longs.length; i++) {
      at += frame.write(texts[i]!, at, "utf8");
      const pieces = escaped[i];
      if (pieces !== undefined) {
        // Each piece without its quotes (a slice shares the piece's characters, no copy).
        for (const piece of pieces) at += frame.write(piece.slice(1, -1), at, "utf8");
        continue;
      }
      const long = longs[i]!;
      const end = at + long.length;
      // At most long.length bytes: an ASCII string fills them exactly; any other is cut short or
      // leaves a byte >= 0x80 behind (the first non-ASCII character takes two bytes or more).
      if (frame.write(long, at, long.length, "utf8") !== long.length) return i;
      if (!isAscii(frame.subarray(at, end)) || needsEscape(frame, at, end)) return i;
      at = end;
    }
    at += frame.write(this.text, at, "utf8");
    frame[at] = 0x0a;
    return at + 1 === bytes ? frame : frame.subarray(0, at + 1);
  }
}

/** Keys this long or shorter have their JSON kept (keyJson). */
const KEPT_KEY_CHARS = 64;
/** At most this many: past it the cache starts again empty. */
const KEPT_KEYS = 256;
const keptKeys = new Map<string, string>();

/**
 * JSON.stringify(key), kept for short keys: frames bring the same few keys again and again
 * ("jsonrpc", "id", "result", "text"...), and a lookup costs less than the stringify.
 */
function keyJson(key: string): string {
  let json = keptKeys.get(key);
  if (json !== undefined) return json;
  json = JSON.stringify(key);
  if (key.length <= KEPT_KEY_CHARS) {
    if (keptKeys.size >= KEPT_KEYS) keptKeys.clear();
    keptKeys.set(key, json);
  }
  return json;
}

/**
 * The Latin-1 copy hasControlCharacter looks at, as bytes and as 32-bit words: allocated on first
 * use (16 KiB) and kept.
 */
let scratch: Buffer | undefined;
let scratchWords: Int32Array = new Int32Array(0);

/**
 * True when `text`, all ASCII and at most TEXT_FRAME_MAX_BYTES long, holds a control character
 * (below 0x20), which JSON escapes. Looked for in a Latin-1 copy (the same bytes, for ASCII), four
 * bytes a word: every byte being below 0x80, `w - 0x20202020` sets some byte's top bit exactly
 * when a byte is below 0x20 (the lowest such byte wraps to 0xe0 or more; no byte borrows unless
 * one below it did). ~2× the general word test of needsEscape, which must also rule out bytes of
 * 0x80 and more.
 */
function hasControlCharacter(text: string): boolean {
  if (scratch === undefined) {
    scratch = Buffer.allocUnsafeSlow(TEXT_FRAME_MAX_BYTES);
    scratchWords = new Int32Array(scratch.buffer, scratch.byteOffset, TEXT_FRAME_MAX_BYTES >> 2);
  }
  const length = text.length;
  scratch.write(text, 0, "latin1");
  const w = scratchWords;
  const words = length >> 2;
  let acc = 0;
  let i = 0;
  for (const stop = words & ~7; i < stop; i += 8) {
    acc |=
      (w[i]! - 0x20202020) |
      (w[i + 1]! - 0x20202020) |
      (w[i + 2]! - 0x20202020) |
      (w[i + 3]! - 0x20202020) |
      (w[i + 4]! - 0x20202020) |
      (w[i + 5]! - 0x20202020) |
      (w[i + 6]! - 0x20202020) |
      (w[i + 7]! - 0x20202020);
  }
  for (; i < words; i++) acc |= w[i]! - 0x20202020;
  if ((acc & 0x80808080) !== 0) return true;
  for (let j = words << 2; j < length; j++) if (scratch[j]! < 0x20) return true;
  return false;
}

/**
 * JSON.stringify(text) in pieces of at most PIECE_CHARS units, each with its own quotes. A piece
 * never ends on a high surrogate, so a pair is never split into two lone halves (a lone high
 * surrogate moves to the next piece, where it is just as lone and escaped the same way).
 */
function escapedPieces(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + PIECE_CHARS, text.length);
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    pieces.push(JSON.stringify(text.slice(start, end)));
    start = end;
  }
  return pieces;
}

/**
 * A string to write into the frame on its own: a long one without a quote, backslash or line
 * break (the engine's single-character search finds them in code, prose or JSON in a string at
 * once), or a very long one whatever it holds.
 */
function writtenApart(text: string): boolean {
  if (text.length >= ESCAPED_STRING_CHARS) return true;
  if (text.length < LONG_STRING_CHARS || hasCommonEscape(text)) return false;
  found = text;
  return true;
}

function hasCommonEscape(text: string): boolean {
  return text.includes('"') || text.includes("\\") || text.includes("\n");
}

/**
 * True when bytes [start, end) (all ASCII, and without `"` or `\`: hasCommonEscape) hold a
 * control character below 0x20.
 */
function needsEscape(buf: Buffer, start: number, end: number): boolean {
  // Control characters, four bytes a word: for bytes below 0x80, (w - 0x20202020) & ~w has a
  // byte's top bit set iff that byte is below 0x20 (the classic "has a byte less than n" test).
  const absolute = buf.byteOffset + start;
  const alignedStart = start + ((4 - (absolute & 3)) & 3);
  if (alignedStart >= end) return hasControlByte(buf, start, end);
  const words = (end - alignedStart) >> 2;
  const alignedEnd = alignedStart + words * 4;
  if (hasControlByte(buf, start, alignedStart) || hasControlByte(buf, alignedEnd, end)) return true;
  const view = new Int32Array(buf.buffer, buf.byteOffset + alignedStart, words);
  let acc = 0;
  let i = 0;
  for (const n = words & ~3; i < n; i += 4) {
    const a = view[i]!;
    const b = view[i + 1]!;
    const c = view[i + 2]!;
    const d = view[i + 3]!;
    acc |=
      ((a - 0x20202020) & ~a) | ((b - 0x20202020) & ~b) | ((c - 0x20202020) & ~c) | ((d - 0x20202020) & ~d);
  }
  for (; i < words; i++) {
    const w = view[i]!;
    acc |= (w - 0x20202020) & ~w;
  }
  return (acc & 0x80808080) !== 0;
}

function hasControlByte(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (buf[i]! < 0x20) return true;
  return false;
}
