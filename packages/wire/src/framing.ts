/**
 * Line framing: one JSON value per `\n`-terminated UTF-8 line, over any Node stream.
 *
 * The decoder works on bytes, not strings, so a chunk boundary inside a multi-byte character can
 * never corrupt a frame: bytes are only decoded once their whole line has arrived. An oversize line
 * is dropped piece by piece as it streams in, so a peer cannot make us buffer more than the limit.
 */
import { isAscii, isUtf8, transcode } from "node:buffer";
import type { Writable } from "node:stream";
import { ConnectionClosedError, FrameTooLargeError } from "./errors.js";
import { type EncodedFrame, encodeLongStringFrame, hasLongString } from "./long-strings.js";

/** 1 MiB: the cap every nexo SDK and the host apply to an inbound line (its newline excluded). */
export const DEFAULT_MAX_FRAME_BYTES = 1 << 20;

const LF = 0x0a;
const CR = 0x0d;

/** What the decoder reports besides good frames. */
export type FrameProblem =
  | { kind: "oversize"; bytes: number; maxBytes: number }
  | { kind: "invalid_utf8"; bytes: number };

export interface LineSink {
  /** A complete, non-empty line, decoded as UTF-8, without its terminator. */
  frame(line: string): void;
  /** A line that was dropped; decoding continues with the next line. */
  problem(problem: FrameProblem): void;
}

export interface LineDecoderOptions {
  /** The largest accepted line in bytes, excluding `\n` or `\r\n`. Default 1 MiB. */
  maxFrameBytes?: number;
}

export class LineDecoder {
  readonly maxFrameBytes: number;
  private readonly sink: LineSink;
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  /** Set while the current line has grown past the limit: its bytes are counted, not kept. */
  private discarding = false;
  private discardedBytes = 0;

  constructor(sink: LineSink, options: LineDecoderOptions = {}) {
    this.sink = sink;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (!Number.isInteger(this.maxFrameBytes) || this.maxFrameBytes < 1) {
      throw new RangeError(`maxFrameBytes must be a positive integer, got ${options.maxFrameBytes}`);
    }
  }

  /** Feeds one chunk; every line it completes is delivered before this returns. */
  push(chunk: Buffer): void {
    let start = 0;
    const length = chunk.length;
    if (this.pendingBytes > 0 || this.discarding) {
      // The chunk first completes the line already begun.
      const newline = chunk.indexOf(LF);
      if (newline === -1) {
        this.keep(chunk, 0, length);
        return;
      }
      this.keep(chunk, 0, newline);
      this.finishLine();
      start = newline + 1;
    }
    const last = start < length ? chunk.lastIndexOf(LF) : -1;
    if (last >= start) {
      this.emitLines(chunk, start, last + 1);
      start = last + 1;
    }
    if (start < length) this.keep(chunk, start, length);
  }
  /** The stream ended: a last line without a newline is still delivered (or reported). */
  end(): void {
    if (this.pendingBytes > 0 || this.discarding) this.finishLine();
  }

  /** Bytes of the current, still incomplete line held in memory. Never above the limit + 1. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  private keep(chunk: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n === 0) return;
    if (this.discarding) {
      this.discardedBytes += n;
      return;
    }
    // One byte of slack: a `\r` that turns out to belong to the terminator does not count.
    if (this.pendingBytes + n > this.maxFrameBytes + 1) {
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + n;
      this.pieces = [];
      this.pendingBytes = 0;
      return;
    }
    this.pieces.push(chunk.subarray(start, end));
    this.pendingBytes += n;
  }

  private finishLine(): void {
    if (this.discarding) {
      const bytes = this.discardedBytes;
      this.discarding = false;
      this.discardedBytes = 0;
      this.sink.problem({ kind: "oversize", bytes, maxBytes: this.maxFrameBytes });
      return;
    }
    const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.pendingBytes);
    this.pieces = [];
    this.pendingBytes = 0;
    this.emitSlice(line, 0, line.length);
  }

  /**
   * Delivers the whole lines in bytes [start, end), which ends with a newline. When the region is
   * valid UTF-8 and no longer than the cap (so no line in it can be over), it is decoded once and
   * split as text: the chunks of a busy connection hold many small lines, and checking and decoding
   * each on its own cost two native calls and a Buffer view per line. A newline byte never occurs
   * inside a multi-byte character, so the region is valid exactly when each of its lines is.
   */
  private emitLines(buf: Buffer, start: number, end: number): void {
    const text = end - start > this.maxFrameBytes ? undefined : decodeUtf8(buf, start, end);
    if (text === undefined) {
      while (start < end) {
        const newline = buf.indexOf(LF, start);
        this.emitSlice(buf, start, newline);
        start = newline + 1;
      }
      return;
    }
    let from = 0;
    const stop = text.length;
    while (from < stop) {
      const newline = text.indexOf("\n", from);
      let to = newline;
      if (to > from && text.charCodeAt(to - 1) === CR) to -= 1;
      if (!isBlankText(text, from, to)) this.sink.frame(text.slice(from, to));
      from = newline + 1;
    }
  }

  private emitSlice(buf: Buffer, start: number, end: number): void {
    if (end > start && buf[end - 1] === CR) end -= 1;
    if (isBlank(buf, start, end)) return;
    const bytes = end - start;
    if (bytes > this.maxFrameBytes) {
      this.sink.problem({ kind: "oversize", bytes, maxBytes: this.maxFrameBytes });
      return;
    }
    const text = decodeUtf8(buf, start, end);
    if (text === undefined) {
      this.sink.problem({ kind: "invalid_utf8", bytes });
      return;
    }
    this.sink.frame(text);
  }
}

/**
 * Regions this large that are not ASCII are decoded through ICU's UTF-8 → UTF-16 conversion.
 * On Node 20 a Buffer's `toString("utf8")` of text with any non-ASCII character falls to V8's
 * decoder character by character (~2.7 ns a byte); the conversion plus a copy into a two-byte
 * string costs about half at 4 KiB and above (JSON.parse of the decoded text included: 16 KiB of
 * source text 40 → 22 µs, 64 KiB 358 → 259 µs); below it, the extra Buffer is not worth it.
 */
const TRANSCODE_MIN_BYTES = 4096;

/** `transcode` is there when Node was built with ICU (official builds are). */
const canTranscode = typeof transcode === "function";

/**
 * Bytes [start, end) as text, or undefined when they are not valid UTF-8. ASCII (most frames:
 * JSON, base64, hex) is valid UTF-8 whose characters are its bytes, and is copied as Latin-1
 * without the UTF-8 check and decoding (a 4 KiB line ~0.32 µs less a side); for valid input all
 * the decoders here give the same string, a byte order mark included.
 */
function decodeUtf8(buf: Buffer, start: number, end: number): string | undefined {
  const region = buf.subarray(start, end);
  if (isAscii(region)) return buf.toString("latin1", start, end);
  if (!isUtf8(region)) return undefined;
  if (end - start < TRANSCODE_MIN_BYTES || !canTranscode) return buf.toString("utf8", start, end);
  return transcode(region, "utf8", "utf16le").toString("utf16le");
}

function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
  }
  return true;
}

/** isBlank for text: only spaces, tabs and carriage returns (or nothing). */
function isBlankText(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
  }
  return true;
}

export interface JsonEncoderOptions {
  /** Refuse to send a message larger than this (bytes of JSON, newline excluded). Default: no limit. */
  maxFrameBytes?: number;
  /**
   * Reject values JSON cannot represent (NaN, ±Infinity, BigInt, undefined at the top level)
   * instead of letting `JSON.stringify` turn them into `null`. The SDK turns this on.
   */
  strictJson?: boolean;
}

/**
 * One message as JSON text under a connection's outbound rules (strict JSON, size cap). Shared by
 * every transport, so a line and a WebSocket text frame refuse exactly the same values.
 */
export class JsonEncoder {
  readonly maxFrameBytes: number;
  private readonly strictJson: boolean;

  constructor(options: JsonEncoderOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? Number.POSITIVE_INFINITY;
    this.strictJson = options.strictJson ?? false;
  }

  /** The JSON text of `value`, size unchecked. Throws TypeError for what JSON cannot represent. */
  serialize(value: unknown): string {
    const json = this.strictJson ? stringifyStrict(value) : JSON.stringify(value);
    if (json === undefined) throw new TypeError("value cannot be represented as JSON");
    return json;
  }

  /** The error to fail a send with when `json` is over the cap, else undefined. */
  checkSize(json: string): FrameTooLargeError | undefined {
    // A UTF-16 code unit never takes more than 3 bytes, so most messages skip the exact count.
    if (json.length * 3 <= this.maxFrameBytes) return undefined;
    const bytes = Buffer.byteLength(json, "utf8");
    return bytes > this.maxFrameBytes ? new FrameTooLargeError(bytes, this.maxFrameBytes) : undefined;
  }
}

export interface FrameWriterOptions extends JsonEncoderOptions {
  /**
   * Coalesce the frames written in one tick into one system call (cork, then uncork on the next
   * tick): many frames in one tick wake the reader once instead of once each. A writer whose last
   * tick sent one frame sends its next tick's first frame at once, uncorked (one request at a
   * time loses nothing, not even the cork's cost); the frames after it in that tick are corked.
   * The json-stream door's event stream, the plugin host and the plugin SDK use it. Default false.
   */
  coalesce?: boolean;
  /**
   * With `coalesce`: at most this many frames per write; the next frame of the same tick starts a
   * new one. Two processes answering each other then work at the same time (one on the frames
   * already sent while the other produces the rest) instead of taking turns with whole ticks.
   * Default: no limit.
   */
  coalesceMaxFrames?: number;
}

/**
 * How a text frame is handed to the stream: "latin1" for the ASCII text long-strings.ts made
 * (the same bytes, copied without encoding), undefined for the stream's default, UTF-8.
 */
type TextEncoding = "latin1" | undefined;

interface QueuedWrite {
  /** The frame with its newline: text, or bytes or ASCII text when long-strings.ts assembled it. */
  line: string | Buffer;
  /** "latin1" for long-strings.ts's ASCII text; otherwise the stream's default (UTF-8) applies. */
  encoding: TextEncoding;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * What FrameWriter (and so LineTransport's `send`) returns for a frame the stream took at once.
 * It never rejects: a caller that sees it can skip attaching a rejection handler, which would
 * otherwise cost a promise and a microtask per message.
 */
export const ACCEPTED: Promise<void> = Promise.resolve();

/**
 * Serializes frames onto a writable stream. Each frame is one `write` call, so frames never
 * interleave; when the stream signals backpressure, later frames wait (in order) for `drain`.
 *
 * Without `coalesce`, frames are handed to the stream at once: between two processes that
 * answer each other frame by frame (bench/wire.bench.ts) the other side starts on the first one
 * while later ones are produced. With it, the frames of one tick leave together: a process that
 * sends many frames per tick (the plugin host's parallel tool calls) otherwise pays one write
 * system call per frame and wakes its reader once per frame, and on a loaded machine the woken
 * reader preempts the writer at every one (docs/performance.md).
 */
export class FrameWriter {
  private readonly stream: Writable;
  private readonly encoder: JsonEncoder;
  private readonly queue: QueuedWrite[] = [];
  private blocked = false;
  private readonly coalesce: boolean;
  /** With coalesce: frames written in this tick (its end is scheduled at the first) and in the last. */
  private tickFrames = 0;
  private lastTickFrames = 0;
  private corked = false;
  private corkedFrames = 0;
  private readonly maxBatch: number;
  private closedError: Error | undefined;

  constructor(stream: Writable, options: FrameWriterOptions = {}) {
    this.stream = stream;
    this.encoder = new JsonEncoder(options);
    this.coalesce = options.coalesce ?? false;
    this.maxBatch = options.coalesceMaxFrames ?? Number.POSITIVE_INFINITY;
    if (!(this.maxBatch >= 1)) {
      throw new RangeError(`coalesceMaxFrames must be at least 1, got ${options.coalesceMaxFrames}`);
    }
  }

  /** Serializes and sends one value. Resolves once the stream has accepted the frame. */
  write(value: unknown): Promise<void> {
    let line: string;
    try {
      // A frame carrying a long string is assembled apart (long-strings.ts), the same bytes.
      const frame = hasLongString(value) ? encodeLongStringFrame(value) : undefined;
      if (frame !== undefined) return this.writeEncoded(frame);
      line = this.serialize(value);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writeLine(line);
  }

  /** Sends an already serialized frame (no newline inside, none at the end). */
  writeLine(json: string): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    const tooLarge = this.encoder.checkSize(json);
    if (tooLarge) return Promise.reject(tooLarge);
    return this.enqueue(`${json}\n`, undefined);
  }

  /**
   * Sends a frame long-strings.ts assembled, ending in its newline: UTF-8 bytes, or ASCII text
   * (one byte a character, written as Latin-1).
   */
  private writeEncoded(frame: EncodedFrame): Promise<void> {
    if (this.closedError) return Promise.reject(this.closedError);
    const bytes = frame.length - 1;
    if (bytes > this.encoder.maxFrameBytes) {
      return Promise.reject(new FrameTooLargeError(bytes, this.encoder.maxFrameBytes));
    }
    return this.enqueue(frame, typeof frame === "string" ? "latin1" : undefined);
  }

  private enqueue(line: string | Buffer, encoding: TextEncoding): Promise<void> {
    if (!this.blocked) {
      this.put(line, encoding);
      return ACCEPTED;
    }
    return new Promise<void>((resolve, reject) => this.queue.push({ line, encoding, resolve, reject }));
  }

  /** Frames waiting for `drain`. */
  get queuedFrames(): number {
    return this.queue.length;
  }

  /** Fails every queued frame and refuses new ones. */
  close(error: Error = new ConnectionClosedError("writer closed")): void {
    if (this.closedError) return;
    this.closedError = error;
    for (const item of this.queue.splice(0)) item.reject(error);
  }

  serialize(value: unknown): string {
    return this.encoder.serialize(value);
  }

  private put(line: string | Buffer, encoding: TextEncoding): void {
    if (this.coalesce && this.tickFrames++ === 0) {
      // After a tick that sent one frame alone, the next tick's first frame leaves at once: at one
      // request in flight every tick sends one frame, which then pays no cork, buffering and later
      // uncork, and the reader starts on it while this side finishes its tick. The end of its tick
      // is scheduled after the write, not before: the other side waits for the write, not for this.
      if (this.lastTickFrames <= 1) {
        this.send(line, encoding);
        process.nextTick(this.endTick);
        return;
      }
      process.nextTick(this.endTick);
    }
    // After a tick of several frames the first one waits for the others, as do the frames after it.
    if (this.coalesce && (this.tickFrames > 1 || this.lastTickFrames > 1)) {
      if (!this.corked) {
        this.corked = true;
        this.corkedFrames = 0;
        this.stream.cork();
      } else if (this.corkedFrames >= this.maxBatch) {
        // Enough for one write: send them now, so the reader starts on them while this side goes on.
        this.stream.uncork();
        this.stream.cork();
        this.corkedFrames = 0;
      }
      this.corkedFrames++;
    }
    this.send(line, encoding);
  }

  private send(line: string | Buffer, encoding: TextEncoding): void {
    const accepted = encoding === undefined ? this.stream.write(line) : this.stream.write(line, encoding);
    if (!accepted) {
      this.blocked = true;
      this.stream.once("drain", this.onDrain);
    }
  }

  private readonly endTick = (): void => {
    this.lastTickFrames = this.tickFrames;
    this.tickFrames = 0;
    if (!this.corked) return;
    this.corked = false;
    this.stream.uncork();
  };

  private readonly onDrain = (): void => {
    this.blocked = false;
    while (!this.blocked && this.queue.length > 0 && !this.closedError) {
      const item = this.queue.shift()!;
      this.put(item.line, item.encoding);
      item.resolve();
    }
  };
}

/**
 * `JSON.stringify` that throws TypeError for NaN, ±Infinity and BigInt instead of writing `null`
 * (undefined for a top-level undefined, function or symbol, as JSON.stringify).
 */
export function stringifyStrict(value: unknown): string | undefined {
  // A replacer takes JSON.stringify off its fast path (about twice the cost for a small frame);
  // a value whose numbers are all finite and that holds nothing exotic needs none.
  return plainFinite(value, 0) ? JSON.stringify(value) : JSON.stringify(value, rejectUnrepresentable);
}

/** Depth past which the check gives up and the replacer decides (it also reports cycles). */
const PLAIN_MAX_DEPTH = 32;

/**
 * True when JSON.stringify alone serializes `value` exactly as the strict replacer would: no
 * NaN/±Infinity, no BigInt, no `toJSON` (whose output the replacer sees, not the value), not too
 * deep. False only means "let the replacer decide", never that the value is refused.
 */
function plainFinite(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value);
    case "bigint":
      return false;
    case "object": {
      if (value === null) return true;
      if (depth >= PLAIN_MAX_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!plainFinite(value[i], depth + 1)) return false;
        return true;
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === "function") return false;
      for (const key in value) {
        if (!plainFinite((value as Record<string, unknown>)[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

function rejectUnrepresentable(_key: string, value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new TypeError(`${value} cannot be represented in JSON`);
  }
  if (typeof value === "bigint") throw new TypeError("BigInt cannot be represented in JSON");
  return value;
}
