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
