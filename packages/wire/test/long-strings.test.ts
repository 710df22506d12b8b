import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { FrameTooLargeError, FrameWriter } from "@nexo/wire";
import fc from "fast-check";
import { TEXT_FRAME_MAX_BYTES } from "../src/long-strings.js";

/**
 * A writer over a sink that keeps every chunk as handed over (string or Buffer) with the encoding
 * it was written with; `bytes()` is what a pipe would carry, `text()` those bytes as UTF-8.
 */
function capture(options: ConstructorParameters<typeof FrameWriter>[1] = {}) {
  const chunks: (string | Buffer)[] = [];
  const encodings: string[] = [];
  const sink = new Writable({
    decodeStrings: false,
    write(chunk, encoding, cb) {
      chunks.push(chunk as string | Buffer);
      encodings.push(encoding);
      cb();
    },
  });
  const bytes = () =>
    Buffer.concat(
      chunks.map((c, i) => (typeof c === "string" ? Buffer.from(c, encodings[i] as BufferEncoding) : c)),
    );
  return { chunks, encodings, bytes, writer: new FrameWriter(sink, options), text: () => bytes().toString() };
}

/** What the writer must produce: JSON.stringify's text (or its TypeError), strict or not. */
function expected(value: unknown, strict: boolean): { json?: string; threw?: boolean } {
  const refuse = (_key: string, v: unknown) => {
    if ((typeof v === "number" && !Number.isFinite(v)) || typeof v === "bigint")
      throw new TypeError("refused");
    return v;
  };
  try {
    const json = strict ? JSON.stringify(value, refuse) : JSON.stringify(value);
    return json === undefined ? { threw: true } : { json: `${json}\n` };
  } catch (error) {
    return { threw: error instanceof TypeError };
  }
}

// Characters that decide the path: plain ASCII (copied as bytes), what JSON escapes, DEL (not
// escaped), non-ASCII, lone and paired surrogates.
const tricky = fc.constantFrom(
  "a",
  "~",
  " ",
  "\u007f",
  '"',
  "\\",
  "\n",
  "\t",
  "\u0000",
  "\u001f",
  "é",
  "€",
  "\ud83c",
  "\udf0d",
  "🌍",
);

/** A string of 1,000–2,100 characters: one repeated letter, half the time with a few tricky ones. */
const longString = fc
  .tuple(
    fc.integer({ min: 1000, max: 2100 }),
    fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.nat(), tricky), { maxLength: 3 })),
  )
  .map(([length, inserts]) => {
    const chars = Array.from({ length }, () => "x");
    for (const [at, c] of inserts) chars[at % length] = c;
    return chars.join("");
  });

const number = fc.oneof(fc.double(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, 5e-324));

describe("frames with long strings (assembled as bytes)", () => {
  test("are byte for byte JSON.stringify's, or refused the same way, for any value around them", async () => {
    const around = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withNullPrototype: true,
      withSparseArray: true,
    });
    await fc.assert(
      fc.asyncProperty(
        around,
        number,
        longString,
        longString,
        fc.boolean(),
        async (value, n, a, b, strict) => {
          const { writer, text } = capture({ strictJson: strict });
          for (const v of [
            { a, value },
            [value, a, { b, n }],
            { jsonrpc: "2.0", id: 1, result: { text: a, value, n } },
            a,
          ]) {
            const want = expected(v, strict);
            const before = text();
            try {
              await writer.write(v);
              assert.equal(text().slice(before.length), want.json, JSON.stringify(v)?.slice(0, 80));
            } catch (error) {
              assert.ok(want.threw && error instanceof TypeError, `unexpected ${error}`);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a frame with a long string leaves as one Buffer, whether the string needs escaping or not", async () => {
    const { chunks, writer } = capture();
    const frames = [
      { blob: "QUJD".repeat(5000) },
      { code: 'const a = "b"; // café €\n'.repeat(3000) },
      { blob: "QUJD".repeat(1024), note: "café" },
    ];
    for (const frame of frames) await writer.write(frame);
    assert.equal(chunks.length, 3);
    for (const [i, frame] of frames.entries()) {
      assert.ok(Buffer.isBuffer(chunks[i]));
      assert.equal(String(chunks[i]), `${JSON.stringify(frame)}\n`);
    }
  });

  test("an all-ASCII frame of up to 16 KiB with a long string leaves as one Latin-1 text chunk", async () => {
    const { chunks, encodings, writer, bytes } = capture();
    const head = '{"blob":"'.length + '"}\n'.length;
    const frames = [
      { blob: "QUJD".repeat(1024) },
      { jsonrpc: "2.0", id: 3, result: { data: "ab~\u007f ".repeat(800), n: [1, null, true] } },
      { blob: "q".repeat(TEXT_FRAME_MAX_BYTES - head) }, // exactly 16 KiB with its newline
    ];
    for (const frame of frames) await writer.write(frame);
    assert.deepEqual(encodings, ["latin1", "latin1", "latin1"]);
    assert.ok(chunks.every((c) => typeof c === "string"));
    assert.ok(bytes().equals(Buffer.from(frames.map((f) => `${JSON.stringify(f)}\n`).join(""))));
    // One byte more, or a control character in the long string: bytes, as before.
    const more = capture();
    await more.writer.write({ blob: "q".repeat(TEXT_FRAME_MAX_BYTES - head + 1) });
    await more.writer.write({ blob: `${"q".repeat(2000)}\u0001` });
    assert.ok(more.chunks.every((c) => Buffer.isBuffer(c)));
    assert.equal(
      more.text(),
      `${JSON.stringify({ blob: "q".repeat(TEXT_FRAME_MAX_BYTES - head + 1) })}\n{"blob":"${"q".repeat(2000)}\\u0001"}\n`,
    );
  });

  test("long strings of any UTF-16, across the 16 Ki-unit pieces, are JSON.stringify's bytes", async () => {
    // Any code unit: lone and paired surrogates, every control character, quotes, backslashes,
    // non-ASCII; pairs and lone halves placed right at the pieces' edges (16,384 units apart) and
    // around the 64 Ki characters from which a string that needs escaping is escaped in pieces.
    const unit = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("a", " ", "~", "\u007f") },
      { weight: 3, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('"', "\\", "\n", "\t", "\u2028", "\ud83c\udf0d", "\ud83c", "\udf0d"),
      },
    );
    const edge = fc.constantFrom(16_382, 16_383, 16_384, 16_385, 32_767, 65_535, 65_536, 81_919, 81_920);
    const text = fc
      .tuple(
        fc.array(unit, { minLength: 1, maxLength: 40 }),
        fc.oneof(fc.integer({ min: 1024, max: 100_000 }), fc.integer({ min: 65_530, max: 65_540 })),
        fc.array(fc.tuple(edge, fc.constantFrom("\ud83c\udf0d", "\ud83c", "\udf0d", '"', "\u0000")), {
          maxLength: 3,
        }),
      )
      .map(([units, length, atEdges]) => {
        let body = units.join("");
        while (body.length < length) body += body;
        body = body.slice(0, length);
        for (const [at, s] of atEdges)
          if (at < body.length) body = body.slice(0, at) + s + body.slice(at + s.length);
        return body;
      });
    await fc.assert(
      fc.asyncProperty(text, fc.boolean(), async (long, strict) => {
        const { writer, bytes } = capture({ strictJson: strict });
        const frame = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: long }], n: 1 } };
        await writer.write(frame);
        assert.ok(bytes().equals(Buffer.from(`${JSON.stringify(frame)}\n`)));
      }),
      { numRuns: 120 },
    );
  });

  test("every control character in a long string is escaped as JSON.stringify escapes it", async () => {
    for (let c = 0; c < 0x80; c++) {
      for (const long of [
        "q".repeat(2000) + String.fromCharCode(c),
        `${"\u00e9".repeat(70_000)}${String.fromCharCode(c)}x`,
      ]) {
        const { writer, text } = capture();
        await writer.write({ long });
        assert.equal(text(), `${JSON.stringify({ long })}\n`);
      }
    }
  });

  test("over a real socket, one frame a write or a tick's frames in one, the bytes are JSON.stringify's", async () => {
    // Latin-1 text (an ASCII frame with a long string), bytes (non-ASCII around a long string, a
    // long string needing escapes) and UTF-8 text (a short frame with non-ASCII) in one tick:
    // corked, Node's writev gets them with their encodings side by side.
    const frames = [
      { jsonrpc: "2.0", id: 1, result: { blob: "QUJD".repeat(1024) } },
      { jsonrpc: "2.0", id: 2, result: { note: "café", blob: "QUJD".repeat(1024) } },
      { jsonrpc: "2.0", id: 3, result: { text: "short, é" } },
      { jsonrpc: "2.0", id: 4, result: { code: 'say "hi"\n'.repeat(500) } },
      { jsonrpc: "2.0", id: 5, result: { blob: "x".repeat(TEXT_FRAME_MAX_BYTES) } },
    ];
    const want = Buffer.from(frames.map((f) => `${JSON.stringify(f)}\n`).join(""));
    const dir = mkdtempSync(join(tmpdir(), "nexo-wire-socket-"));
    try {
      for (const coalesce of [false, true]) {
        const path = join(dir, `s-${coalesce}`);
        const received: Buffer[] = [];
        const done = new Promise<void>((resolve) => {
          const server = createServer((socket) => {
            socket.on("data", (chunk: Buffer) => received.push(chunk));
            socket.on("end", () => {
              server.close();
              resolve();
            });
          });
          server.listen(path);
        });
        const client = createConnection(path);
        await new Promise((resolve) => client.once("connect", resolve));
        const writer = new FrameWriter(client, { coalesce });
        await Promise.all(frames.map((f) => writer.write(f)));
        client.end();
        await done;
        assert.ok(Buffer.concat(received).equals(want), `coalesce ${coalesce}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a control character anywhere in an ASCII long string is found, at any length", async () => {
    // The ASCII text path looks for control characters four bytes a word, eight words a step,
    // then word by word, then byte by byte: each position of each of those, and none at all.
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1024, max: 1100 }),
        fc.nat(),
        fc.integer({ min: 0, max: 0x1f }).filter((c) => c !== 0x0a),
        fc.constantFrom(" ", "~", "\u007f", "A"),
        fc.boolean(),
        async (length, at, control, filler, clean) => {
          const chars: string[] = Array.from({ length }, (_, i) => (i % 3 === 0 ? filler : "z"));
          if (!clean) chars[at % length] = String.fromCharCode(control);
          const frame = { jsonrpc: "2.0", id: at, result: { text: chars.join("") } };
          const { writer, bytes, encodings } = capture();
          await writer.write(frame);
          assert.ok(bytes().equals(Buffer.from(`${JSON.stringify(frame)}\n`)));
          assert.equal(encodings[0], clean ? "latin1" : "buffer");
        },
      ),
      { numRuns: 400 },
    );
  });

  test("toJSON, class instances and getters on the way keep JSON.stringify's meaning", async () => {
    const long = "y".repeat(4096);
    class Box {
      constructor(readonly inner: string) {}
    }
    const values = [
      { at: { toJSON: (key: string) => `${key}:${long}` } },
      { box: new Box(long) },
      {
        get lazy() {
          return long;
        },
      },
      { list: [undefined, () => 1, Symbol("s"), long], skipped: undefined, fn: () => 1 },
      Object.assign(Object.create(null) as object, { long }),
    ];
    for (const v of values) {
      const { writer, text } = capture();
      await writer.write(v);
      assert.equal(text(), `${JSON.stringify(v)}\n`);
    }
  });

  test("the size cap counts the assembled bytes", async () => {
    const { writer, chunks } = capture({ maxFrameBytes: 2000 });
    const frame = { t: "z".repeat(1990) }; // 1,998 bytes of JSON: fits
    await writer.write(frame);
    await assert.rejects(writer.write({ t: "z".repeat(1993) }), (error: unknown) => {
      assert.ok(error instanceof FrameTooLargeError);
      assert.match(error.message, /2001/);
      return true;
    });
    assert.equal(chunks.length, 1);
  });
});
