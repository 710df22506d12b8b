/**
 * A child's stderr, turned into log lines and a bounded tail for diagnostics.
 *
 * stderr is free text from programs we do not control, so nothing here trusts it: a line without a
 * newline cannot make us buffer more than `maxLineBytes` (the rest is counted and dropped), bytes
 * that are not UTF-8 are decoded with replacement characters rather than rejected (a garbled line
 * still helps diagnose a crash), and only the last `tailLines` lines are kept.
 */

export const DEFAULT_STDERR_TAIL_LINES = 200;
export const DEFAULT_STDERR_MAX_LINE_BYTES = 8 * 1024;

const LF = 0x0a;

/** Keeps the last `capacity` items; older ones fall off. */
export class RingBuffer<T> {
  readonly capacity: number;
  private readonly items: T[] = [];
  private start = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) {
      throw new RangeError(`ring buffer capacity must be a non-negative integer, got ${capacity}`);
    }
    this.capacity = capacity;
  }

  push(item: T): void {
    if (this.capacity === 0) return;
    if (this.items.length < this.capacity) {
      this.items.push(item);
      return;
    }
    this.items[this.start] = item;
    this.start = (this.start + 1) % this.capacity;
  }

  /** Oldest first. */
  toArray(): T[] {
    return [...this.items.slice(this.start), ...this.items.slice(0, this.start)];
  }

  get size(): number {
    return this.items.length;
  }

  clear(): void {
    this.items.length = 0;
    this.start = 0;
  }
}

/**
 * Splits a byte stream into lines. A line longer than `maxLineBytes` is cut: its head is delivered
 * with a note saying how many bytes were dropped. Blank lines are skipped.
 */
export class StderrLineSplitter {
  private readonly maxLineBytes: number;
  private readonly onLine: (line: string) => void;
  private pieces: Buffer[] = [];
  private keptBytes = 0;
  private droppedBytes = 0;

  constructor(onLine: (line: string) => void, maxLineBytes = DEFAULT_STDERR_MAX_LINE_BYTES) {
    if (!Number.isInteger(maxLineBytes) || maxLineBytes < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${maxLineBytes}`);
    }
    this.onLine = onLine;
    this.maxLineBytes = maxLineBytes;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(LF, start);
      const end = newline === -1 ? chunk.length : newline;
      this.keep(chunk.subarray(start, end));
      if (newline === -1) return;
      this.flush();
      start = newline + 1;
    }
  }

  /** The stream ended: a last line without a newline is still delivered. */
  end(): void {
    if (this.keptBytes > 0 || this.droppedBytes > 0) this.flush();
  }

  private keep(piece: Buffer): void {
    const room = this.maxLineBytes - this.keptBytes;
    if (piece.length <= room) {
      if (piece.length > 0) this.pieces.push(piece);
      this.keptBytes += piece.length;
      return;
    }
    if (room > 0) this.pieces.push(piece.subarray(0, room));
    this.keptBytes += Math.max(room, 0);
    this.droppedBytes += piece.length - Math.max(room, 0);
  }

  private flush(): void {
    let line = Buffer.concat(this.pieces, this.keptBytes).toString("utf8");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (this.droppedBytes > 0) line += ` … [${this.droppedBytes} more bytes dropped]`;
    this.pieces = [];
    this.keptBytes = 0;
    this.droppedBytes = 0;
    if (line.trim() !== "") this.onLine(line);
  }
}

export type StderrLevel = "debug" | "info" | "warn" | "error";

/**
 * The log level a line asks for. The microapp contract asks children to prefix lines with
 * `[INFO]`, `[WARN]`, `[ERROR]`; plugins' SDKs write plain text, which is logged at info.
 */
export function stderrLevel(line: string): StderrLevel {
  const match = /^\s*\[(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\]/i.exec(line);
  switch (match?.[1]?.toUpperCase()) {
    case "TRACE":
    case "DEBUG":
      return "debug";
    case "WARN":
    case "WARNING":
      return "warn";
    case "ERROR":
    case "FATAL":
      return "error";
    default:
      return "info";
  }
}
