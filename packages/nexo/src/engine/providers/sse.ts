/**
 * Server-sent events (the WHATWG `text/event-stream` format) split out of a response body's text.
 *
 * The providers read the vendors' streams with this rather than with the SDKs' stream helpers: the
 * OpenAI SDK's helper copies its whole pending buffer once per event (a 16 KiB read holding a
 * hundred events is copied a hundred times) and both SDKs hand events on through several async
 * generators, one promise per layer and event. Here a body read is split in one pass and its events
 * are returned together, so the caller awaits once per read, not once per event
 * (docs/performance.md, "OpenAI-format streaming").
 */

export interface SseMessage {
  /** The `event:` field, or null when the message had none. */
  event: string | null;
  /** The `data:` lines joined with "\n". */
  data: string;
}

/**
 * How a stream's commonest message looks in the body's text once a reader has learnt it (see
 * text-chunks.ts): `head`, a piece of text, `tail`. `head` is the message's `event:` line if it
 * had one, `data: ` and the envelope's text before the piece's string; `tail` is the envelope
 * after it and the blank line that ends the message.
 */
export interface TextFrame {
  head: string;
  tail: string;
}

/**
 * A vendor's reader of one response's messages: each message → the vendor's chunk, or undefined
 * for one that carries none (a ping, the end marker). `frame` is the text message it has learnt
 * (none yet, or none any more: undefined); such a message with a piece of text in it reads as that
 * text, so the text is its chunk.
 */
export type SseReader<Chunk> = ((message: SseMessage) => Chunk | undefined) & {
  frame(): TextFrame | undefined;
};

/** Where `SseParser.read` hands what it reads, in the body's order. */
export interface SseSink {
  /** The frame a message must fill to be read as its text alone; undefined while there is none. */
  frame(): TextFrame | undefined;
  message(message: SseMessage): void;
  /** A message that was the frame around a JSON string's contents: the string's text. */
  text(text: string): void;
}

/** Splits text into SSE messages; feed it the decoded body in order, then call `end()`. */
export class SseParser {
  private pending = "";
  private event: string | null = null;
  private data: string[] = [];
  /** A read ended on "\r": a "\n" starting the next one belongs to the same line ending. */
  private afterCr = false;
  private started = false;

  push(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    if (text === "") return out;
    let start = 0;
    if (this.afterCr && text.charCodeAt(0) === 10) start = 1;
    this.afterCr = false;
    if (!this.started && text.length > start) {
      this.started = true;
      if (text.charCodeAt(start) === 0xfeff) start++;
    }
    const length = text.length;
    let i = start;
    // Where the next "\r" is: found once per read and again only after it is passed, so text
    // without any (every vendor's) is not rescanned for each line.
    let cr = text.indexOf("\r", i);
    while (i < length) {
      if (cr !== -1 && cr < i) cr = text.indexOf("\r", i);
      const lf = text.indexOf("\n", i);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 === length) {
          this.afterCr = true;
          next = length;
        } else next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      const line = this.pending === "" ? text.slice(i, end) : this.pending + text.slice(i, end);
      this.pending = "";
      this.line(line, out);
      i = next;
    }
    if (i < length) this.pending += text.slice(i);
    return out;
  }

  /**
   * Like `push`, but a message that is exactly the sink's frame around a piece of text is handed on
   * as that text, without being cut into lines, fields and a message object — for a stream of
   * text deltas that was most of the reader's work per delta, and the OpenAI format's longer lines
   * paid more of it (docs/performance.md, "OpenAI-format streaming"). A frame is tried only where
   * a message starts (nothing of a line or a message pending), so the text from there to the
   * tail's blank line is one whole message that `push` would read as the frame's event and data.
   * A message that does not fit goes through `push` alone, so that the frame is tried again on the
   * next one. Every cut of the text into reads gives the same messages and texts.
   */
  read(text: string, sink: SseSink): void {
    const length = text.length;
    let i = 0;
    while (i < length) {
      // One message: to the next blank line written "\n\n" (a stream that ends its lines
      // otherwise never fits a frame, whose tail ends so), so that the reader may learn its frame
      // from it before the next one.
      const blank = text.indexOf("\n\n", i);
      const cut = blank === -1 ? length : blank + 2;
      if (blank !== -1 && this.between()) {
        const frame = sink.frame();
        if (frame !== undefined && framed(text, i, cut, frame, sink)) {
          i = cut;
          continue;
        }
      }
      for (const message of this.push(i === 0 && cut === length ? text : text.slice(i, cut)))
        sink.message(message);
      i = cut;
    }
  }

  /** Nothing of a line or a message is pending: the next character starts a message. */
  private between(): boolean {
    return (
      this.started && !this.afterCr && this.pending === "" && this.event === null && this.data.length === 0
    );
  }

  /** The body ended: a message without its closing blank line is incomplete and is dropped. */
  end(): SseMessage[] {
    this.pending = "";
    this.event = null;
    this.data = [];
    return [];
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === "") {
      if (this.event !== null || this.data.length > 0) {
        out.push({ event: this.event, data: this.data.length === 1 ? this.data[0]! : this.data.join("\n") });
        this.event = null;
        this.data = [];
      }
      return;
    }
    const colon = line.indexOf(":");
    if (colon === 0) return; // a comment
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== "data" && field !== "event") return; // id, retry and unknown fields mean nothing here
    const value = colon === -1 ? "" : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === "data") this.data.push(value);
    else this.event = value;
  }
}

/**
 * When the message from `at` to `end` (just after its blank line) is `frame` around a piece, hands
 * the piece's text to the sink and says so. The piece is read as the JSON string literal it is in
 * the message: it holds no control character (a raw line break would have ended the line), and
 * one with a quote or an escape is parsed as a string literal of its own — valid only when its
 * quotes are escaped, so that the string ends where the tail begins, as text-chunks.ts reads it.
 * Anything else is left to `push` and the reader. Compared as substrings: V8's startsWith walks
 * the characters one by one.
 */
function framed(text: string, at: number, end: number, frame: TextFrame, sink: SseSink): boolean {
  const { head, tail } = frame;
  const start = at + head.length;
  const stop = end - tail.length;
  if (stop < start || text.substring(at, start) !== head || text.substring(stop, end) !== tail) return false;
  let escaped = false;
  let quoted = false;
  for (let i = start; i < stop; i++) {
    const code = text.charCodeAt(i);
    if (code < 32) return false;
    if (code === 92) escaped = true;
    else if (code === 34) quoted = true;
  }
  let piece = text.slice(start, stop);
  if (escaped) {
    try {
      piece = JSON.parse(`"${piece}"`) as string;
    } catch {
      return false;
    }
  } else if (quoted) return false;
  sink.text(piece);
  return true;
}
