import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { FrameTooLargeError, FrameWriter } from "@nexo/wire";
import fc from "fast-check";

/** A writer over a sink that keeps every chunk as handed over (string or Buffer). */
function capture(options: ConstructorParameters<typeof FrameWriter>[1] = {}) {
  const chunks: (string | Buffer)[] = [];
  const sink = new Writable({
    decodeStrings: false,
    write(chunk, _enc, cb) {
      chunks.push(chunk as string | Buffer);
      cb();
    },
  });
  return { chunks, writer: new FrameWriter(sink, options), text: () => chunks.map(String).join("") };
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

  test("a clean long ASCII string leaves as one Buffer; one that needs escaping as text", async () => {
    const { chunks, writer } = capture();
    await writer.write({ blob: "QUJD".repeat(1024) });
    await writer.write({ code: 'const a = "b";\n'.repeat(100) });
    assert.ok(Buffer.isBuffer(chunks[0]));
    assert.equal(String(chunks[0]), `${JSON.stringify({ blob: "QUJD".repeat(1024) })}\n`);
    assert.equal(typeof chunks[1], "string");
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
