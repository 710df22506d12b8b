/**
 * Utf8Stream decodes a body cut into reads anywhere exactly as TextDecoder with `{stream: true}`
 * does: valid and malformed UTF-8, characters cut between reads, byte-order marks.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Utf8Stream } from "../../../src/engine/providers/utf8-stream.js";

/** TextDecoder's reading of the reads, as the providers used it before. */
function reference(reads: Uint8Array[]): string {
  const decoder = new TextDecoder();
  return reads.map((read) => decoder.decode(read, { stream: true })).join("") + decoder.decode();
}

function ours(reads: Uint8Array[], stream = new Utf8Stream()): string {
  return reads.map((read) => stream.decode(read)).join("") + stream.end();
}

/** Bytes that are mostly UTF-8's building blocks: ASCII, leads of every length, continuations, BOMs. */
const byte = fc.oneof(
  fc.integer({ min: 0, max: 255 }),
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0x80, max: 0xbf }),
  fc.constantFrom(
    0xc0,
    0xc1,
    0xc2,
    0xdf,
    0xe0,
    0xe1,
    0xed,
    0xef,
    0xf0,
    0xf4,
    0xf5,
    0xff,
    0xa0,
    0x9f,
    0x90,
    0x8f,
  ),
);
const text = fc.string({ unit: "binary" }).map((s) => Buffer.from(s, "utf8"));
const body = fc.oneof(
  fc.array(byte, { maxLength: 40 }).map((bytes) => Uint8Array.from(bytes)),
  text.map((b) => new Uint8Array(b)),
  fc
    .tuple(fc.boolean(), text, fc.array(byte, { maxLength: 8 }), text)
    .map(
      ([bom, a, junk, b]) =>
        new Uint8Array(Buffer.concat([Buffer.from(bom ? [0xef, 0xbb, 0xbf] : []), a, Buffer.from(junk), b])),
    ),
);

/** `bytes` cut at the given places (each taken modulo the length), as a body's reads. */
function cutAt(bytes: Uint8Array, places: number[]): Uint8Array[] {
  const at = [...new Set(places.map((p) => (bytes.length === 0 ? 0 : p % (bytes.length + 1))))].sort(
    (a, b) => a - b,
  );
  const reads: Uint8Array[] = [];
  let from = 0;
  for (const to of [...at, bytes.length]) {
    reads.push(bytes.subarray(from, to));
    from = to;
  }
  return reads;
}

describe("Utf8Stream", () => {
  it("reads any bytes cut into any reads as TextDecoder does", () => {
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 12 }), (bytes, places) => {
        const reads = cutAt(bytes, places);
        assert.equal(ours(reads), reference(reads));
      }),
      { numRuns: 5000 },
    );
  });

  it("reads every byte apart as TextDecoder does", () => {
    fc.assert(
      fc.property(body, (bytes) => {
        const reads = [...bytes].map((b) => Uint8Array.of(b));
        assert.equal(ours(reads), reference(reads));
      }),
      { numRuns: 1000 },
    );
  });

  it("holds a character cut between reads, ends a cut one as U+FFFD, drops only the first BOM", () => {
    const euro = [0xe2, 0x82, 0xac];
    const stream = new Utf8Stream();
    assert.equal(stream.decode(Uint8Array.of(0xef, 0xbb)), "");
    assert.equal(stream.decode(Uint8Array.of(0xbf, 0x61, euro[0]!, euro[1]!)), "a");
    assert.equal(stream.decode(Uint8Array.of(euro[2]!, 0xef, 0xbb, 0xbf)), "€\ufeff");
    assert.equal(stream.decode(Uint8Array.of(0xf0, 0x9f)), "");
    assert.equal(stream.end(), "\ufffd");
    // After end() the stream starts again: a new body's BOM is dropped.
    assert.equal(ours([Uint8Array.of(0xef, 0xbb, 0xbf, 0x62)], stream), "b");
  });
});
