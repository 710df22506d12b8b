/**
 * Output caps. Tool output goes to the model's context, so every long output is cut to a byte
 * budget, and the cut is always announced so the model knows it did not see everything.
 */

export interface Truncated {
  text: string;
  /** Bytes (UTF-8) that were left out; 0 when nothing was cut. */
  cutBytes: number;
}

export function truncationMarker(cutBytes: number, totalBytes: number): string {
  return `[… output truncated: ${cutBytes} of ${totalBytes} bytes cut …]`;
}

/** Keeps the first `maxBytes` bytes of `text` (never splitting a character) and appends a marker. */
export function truncateHead(text: string, maxBytes: number): Truncated {
  // A UTF-16 code unit never takes more than 3 bytes in UTF-8: most outputs are known to fit
  // without encoding them, and the rest are measured before any copy is made.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes)
    return { text, cutBytes: 0 };
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return { text, cutBytes: 0 };
  const head = decodePrefix(bytes, maxBytes);
  const cutBytes = bytes.length - Buffer.byteLength(head, "utf8");
  return { text: `${head}\n${truncationMarker(cutBytes, bytes.length)}`, cutBytes };
}

/**
 * Collects a stream of chunks in bounded memory, keeping the first and the last half of the
 * budget: a command's start says what it did, its end says how it finished.
 */
export class HeadTailCapture {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(maxBytes: number) {
    this.headLimit = Math.ceil(maxBytes / 2);
    this.tailLimit = Math.floor(maxBytes / 2);
  }

  get totalBytes(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(this.headLimit - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailLimit === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tail.length > 0 && this.tailBytes - this.tail[0]!.length >= this.tailLimit) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  /** The captured text; when bytes were dropped, a marker sits where they were. */
  render(): Truncated {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailLimit) tail = tail.subarray(tail.length - this.tailLimit);
    const kept = head.length + tail.length;
    if (kept === this.total) return { text: Buffer.concat([head, tail]).toString("utf8"), cutBytes: 0 };
    const headText = decodePrefix(head, head.length);
    const tailText = decodeSuffix(tail);
    const cutBytes = this.total - Buffer.byteLength(headText) - Buffer.byteLength(tailText);
    const marker = truncationMarker(cutBytes, this.total);
    return { text: `${headText}\n${marker}\n${tailText}`, cutBytes };
  }
}

/** The longest prefix of at most `maxBytes` bytes that ends on a character boundary. */
function decodePrefix(bytes: Buffer, maxBytes: number): string {
  const end = Math.min(maxBytes, bytes.length);
  if (end === 0) return "";
  // Find where the character holding the last kept byte starts; drop it whole if it is incomplete.
  let lead = end - 1;
  while (lead > 0 && end - lead < 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  const complete = lead + utf8SequenceLength(bytes[lead]!) <= end;
  return bytes.subarray(0, complete ? end : lead).toString("utf8");
}

function utf8SequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** The bytes after any leading continuation bytes (the remains of a character cut in half). */
function decodeSuffix(bytes: Buffer): string {
  let start = 0;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString("utf8");
}
