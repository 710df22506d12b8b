/**
 * A response body's bytes → text, exactly as `new TextDecoder()` with `{stream: true}` decodes
 * them (malformed bytes become U+FFFD the same way, one leading byte-order mark is dropped), at
 * a sixth of its cost on ASCII-heavy streams: Node 20's TextDecoder sends streamed input through
 * ICU's converter, about 16 µs for a 16 KiB read, where Node's `string_decoder` (Buffer's own
 * UTF-8 decoding, holding back a character a read cuts until the next one completes it) takes
 * under 3 µs. For a stream that was a tenth of a provider's CPU per delta, and the OpenAI format,
 * whose deltas carry 1.7× the bytes, paid it 1.7× (docs/performance.md, "OpenAI-format
 * streaming"). What string_decoder does not do is TextDecoder's dropping of a leading byte-order
 * mark; that is done here. utf8-stream.test.ts checks the whole against TextDecoder for any bytes
 * cut anywhere.
 */
import { isAscii } from "node:buffer";
import { StringDecoder } from "node:string_decoder";

const BOM = 0xfeff;

export class Utf8Stream {
  /** Reusable after `end` (string_decoder resets itself there). */
  private readonly decoder = new StringDecoder("utf8");
  private started = false;
  /** Nothing of an earlier read is held back by the decoder. */
  private clean = true;

  /** The text of `bytes` and of what the previous reads left, up to the last whole character. */
  decode(bytes: Uint8Array): string {
    // A read of ASCII alone, with no character of an earlier read pending, is the same text in
    // Latin-1: copied once (after a SIMD check) instead of UTF-8-decoded, a third less per byte —
    // and an answer in English arrives as ASCII alone.
    if (this.clean && isAscii(bytes)) {
      if (bytes.length > 0) this.started = true;
      const view = Buffer.isBuffer(bytes)
        ? bytes
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      return view.toString("latin1");
    }
    // string_decoder holds back bytes only when a read ends inside a character, which an ASCII
    // last byte never is.
    if (bytes.length > 0) this.clean = bytes[bytes.length - 1]! < 0x80;
    return this.text(this.decoder.write(bytes));
  }

  /** The body ended: a character it cut short is U+FFFD, as TextDecoder ends it. */
  end(): string {
    const text = this.text(this.decoder.end());
    this.started = false;
    this.clean = true;
    return text;
  }

  private text(text: string): string {
    if (this.started || text === "") return text;
    this.started = true;
    return text.charCodeAt(0) === BOM ? text.slice(1) : text;
  }
}
