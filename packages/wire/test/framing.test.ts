import assert from "node:assert/strict";
import { isUtf8 } from "node:buffer";
import { PassThrough, Writable } from "node:stream";
import { describe, test } from "node:test";
import { type FrameProblem, FrameTooLargeError, FrameWriter, LineDecoder, stringifyStrict } from "@nexo/wire";
import fc from "fast-check";

function collect(maxFrameBytes?: number) {
  const frames: string[] = [];
  const problems: FrameProblem[] = [];
  const decoder = new LineDecoder(
    { frame: (line) => frames.push(line), problem: (p) => problems.push(p) },
    maxFrameBytes === undefined ? {} : { maxFrameBytes },
  );
  return { frames, problems, decoder };
}

/** Splits `buf` at the given (sorted, deduplicated) offsets. */
function splitAt(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(buf.subarray(prev, p));
    prev = p;
  }
  out.push(buf.subarray(prev));
  return out;
}

describe("LineDecoder", () => {
  test("delivers complete lines, tolerates CRLF and skips blank lines", () => {
    const { frames, problems, decoder } = collect();
    decoder.push(Buffer.from('{"a":1}\r\n\n   \r\n{"b":2}\n'));
    assert.deepEqual(frames, ['{"a":1}', '{"b":2}']);
    assert.deepEqual(problems, []);
  });

  test("a multi-byte character split across chunks survives", () => {
    const { frames, decoder } = collect();
    const bytes = Buffer.from('{"t":"héllo 🌍"}\n');
    const cut = bytes.indexOf(0xf0) + 2; // inside the 4-byte emoji
    decoder.push(bytes.subarray(0, cut));
    decoder.push(bytes.subarray(cut));
    assert.deepEqual(frames, ['{"t":"héllo 🌍"}']);
  });

  test("an unterminated last line is delivered at end()", () => {
    const { frames, decoder } = collect();
    decoder.push(Buffer.from('{"a":1}\n{"b"'));
    decoder.push(Buffer.from(":2}"));
    assert.deepEqual(frames, ['{"a":1}']);
    decoder.end();
    assert.deepEqual(frames, ['{"a":1}', '{"b":2}']);
  });

  test("a line of exactly the limit passes; one byte more is dropped and reported", () => {
    const { frames, problems, decoder } = collect(8);
    decoder.push(Buffer.from("12345678\n123456789\nok\n"));
    assert.deepEqual(frames, ["12345678", "ok"]);
    assert.deepEqual(problems, [{ kind: "oversize", bytes: 9, maxBytes: 8 }]);
  });

  test("CRLF does not count toward the limit", () => {
    const { frames, decoder } = collect(8);
    decoder.push(Buffer.from("1234"));
    decoder.push(Buffer.from("5678\r"));
    decoder.push(Buffer.from("\n"));
    assert.deepEqual(frames, ["12345678"]);
  });

  test("an oversize line is never buffered whole, and decoding resumes after it", () => {
    const { frames, problems, decoder } = collect(1024);
    const piece = Buffer.alloc(4096, 0x61);
    let maxBuffered = 0;
    for (let i = 0; i < 256; i++) {
      decoder.push(piece); // 1 MiB in total, no newline yet
      maxBuffered = Math.max(maxBuffered, decoder.bufferedBytes);
    }
    decoder.push(Buffer.from('aaa\n{"next":true}\n'));
    assert.ok(maxBuffered <= 1025, `buffered ${maxBuffered} bytes`);
    assert.deepEqual(frames, ['{"next":true}']);
    assert.deepEqual(problems, [{ kind: "oversize", bytes: 256 * 4096 + 3, maxBytes: 1024 }]);
  });

  test("invalid UTF-8 is reported, not decoded into replacement characters", () => {
    const { frames, problems, decoder } = collect();
    decoder.push(Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a, 0x31, 0x0a]));
    assert.deepEqual(frames, ["1"]);
    assert.deepEqual(problems, [{ kind: "invalid_utf8", bytes: 4 }]);
  });

  test("property: any chunking of any frame sequence yields the same frames", () => {
    const frameArb = fc
      .array(fc.jsonValue({ maxDepth: 3 }), { minLength: 0, maxLength: 20 })
      .map((values) => values.map((v) => JSON.stringify(v)));
    fc.assert(
      fc.property(frameArb, fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), (lines, cuts, crlf) => {
        const wire = Buffer.from(lines.map((l) => l + (crlf ? "\r\n" : "\n")).join(""), "utf8");
        const { frames, problems, decoder } = collect();
        for (const chunk of splitAt(wire, cuts)) decoder.push(chunk);
        decoder.end();
        assert.deepEqual(problems, []);
        assert.deepEqual(frames, lines);
      }),
      { numRuns: 300 },
    );
  });

  test("property: long lines with any non-ASCII text (decoded through ICU from 4 KiB) arrive exactly", () => {
    // Well-formed UTF-16 (lone surrogates cannot be UTF-8), any plane, any control character but
    // a line break, mostly ASCII as real text is; lines from a few bytes to past 4 KiB.
    const unit = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 0, max: 0x1f })
          .filter((c) => c !== 0x0a && c !== 0x0d)
          .map((c) => String.fromCharCode(c)),
      },
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 0x80, max: 0x10ffff })
          .filter((c) => c < 0xd800 || c > 0xdfff)
          .map((c) => String.fromCodePoint(c)),
      },
      { weight: 1, arbitrary: fc.constantFrom("\ufeff", "\u00e9", "\u20ac", "\uffff") },
    );
    const line = fc
      .tuple(fc.array(unit, { minLength: 1, maxLength: 64 }), fc.integer({ min: 1, max: 200 }))
      .map(([units, times]) => units.join("").repeat(times))
      .filter((text) => text.trim() !== "");
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (lines, cuts) => {
          const wire = Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8");
          const { frames, problems, decoder } = collect();
          for (const chunk of splitAt(wire, cuts)) decoder.push(chunk);
          decoder.end();
          assert.deepEqual(problems, []);
          assert.deepEqual(frames, lines);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("property: oversize lines are dropped exactly, whatever the chunking", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !/[\n\r]/.test(s) && s.trim() !== ""),
          {
            maxLength: 15,
          },
        ),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.integer({ min: 1, max: 64 }),
        (lines, cuts, limit) => {
          const wire = Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8");
          const { frames, problems, decoder } = collect(limit);
          for (const chunk of splitAt(wire, cuts)) decoder.push(chunk);
          decoder.end();
          const expectedFrames = lines.filter((l) => Buffer.byteLength(l) <= limit);
          const expectedDropped = lines
            .filter((l) => Buffer.byteLength(l) > limit)
            .map((l) => Buffer.byteLength(l));
          assert.deepEqual(frames, expectedFrames);
          assert.deepEqual(
            problems.map((p) => p.bytes),
            expectedDropped,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test("property: a mix of good, blank, invalid and oversize lines gives the same frames and problems whatever the chunking", () => {
    // Lines as bytes: text (may hold multi-byte characters), blanks, invalid UTF-8, long text.
    const line = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 30 }).filter((t) => !/[\n\r]/.test(t) && t.trim() !== ""),
      fc.constantFrom("", " ", "\t ", " \r"),
      fc.constantFrom(Buffer.from([0x61, 0xff, 0x62]), Buffer.from([0xe2, 0x82]), Buffer.from([0xc3, 0x28])),
      fc.integer({ min: 65, max: 200 }).map((n) => "y".repeat(n)),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(line, fc.boolean()), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.integer({ min: 16, max: 64 }),
        (lines, cuts, limit) => {
          const parts = lines.map(([l, crlf]) =>
            Buffer.concat([Buffer.from(l), Buffer.from(crlf ? "\r\n" : "\n")]),
          );
          const wire = Buffer.concat(parts);
          // The model: each line on its own, as the decoder's rules say.
          const want: { frames: string[]; kinds: string[] } = { frames: [], kinds: [] };
          for (const [l] of lines) {
            const bytes = Buffer.from(l);
            if (/^[ \t\r]*$/.test(bytes.toString("latin1"))) continue;
            if (bytes.length > limit) want.kinds.push("oversize");
            else if (!isUtf8(bytes)) want.kinds.push("invalid_utf8");
            else want.frames.push(bytes.toString("utf8"));
          }
          const { frames, problems, decoder } = collect(limit);
          for (const chunk of splitAt(wire, cuts)) decoder.push(chunk);
          decoder.end();
          assert.deepEqual(frames, want.frames);
          assert.deepEqual(
            problems.map((p) => p.kind),
            want.kinds,
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  test("property: random bytes never throw out of the decoder", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 10 }), (chunks) => {
        const { decoder } = collect(64);
        for (const c of chunks) decoder.push(Buffer.from(c));
        decoder.end();
      }),
      { numRuns: 500 },
    );
  });
});

describe("FrameWriter", () => {
  test("each frame is one newline-terminated JSON line", async () => {
    const out = new PassThrough();
    const writer = new FrameWriter(out);
    await writer.write({ a: 1 });
    await writer.write("é");
    out.end();
    const text = (await out.toArray()).map(String).join("");
    assert.equal(text, '{"a":1}\n"é"\n');
  });

  test("refuses frames over its limit and unrepresentable values in strict mode", async () => {
    const writer = new FrameWriter(new PassThrough(), { maxFrameBytes: 10, strictJson: true });
    await assert.rejects(writer.write("x".repeat(20)), FrameTooLargeError);
    await assert.rejects(writer.write({ n: Number.NaN }), /NaN cannot be represented/);
    await assert.rejects(writer.write({ n: Number.POSITIVE_INFINITY }), /Infinity cannot be represented/);
    await assert.rejects(writer.write(undefined), /cannot be represented/);
  });

  /** A stream that records what each of its writes (a writev's chunks together) carried. */
  function recordingSink(): { sink: Writable; writes: string[] } {
    const writes: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        writes.push(String(chunk));
        cb();
      },
      writev(chunks, cb) {
        writes.push(chunks.map(({ chunk }) => String(chunk)).join(""));
        cb();
      },
    });
    return { sink, writes };
  }

  test("coalesce: the frames of one tick leave in one write; after a lone frame the next leaves at once", async () => {
    const { sink, writes } = recordingSink();
    const writer = new FrameWriter(sink, { coalesce: true });
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `{"i":${from + i}}\n`).join("");
    const afterTick = () => new Promise((r) => setImmediate(r));
    // A fresh writer has sent nothing alone before: its first frame goes out at once, the rest wait.
    await Promise.all(Array.from({ length: 16 }, (_, i) => writer.write({ i })));
    await afterTick();
    assert.deepEqual(writes, [lines(0, 1), lines(1, 16)]);
    // After a tick of 16 frames, a tick's first frame waits for the tick's end, then leaves alone.
    await writer.write({ alone: 1 });
    assert.equal(writes.length, 2, "corked until the tick ends");
    await afterTick();
    assert.deepEqual(writes.slice(2), ['{"alone":1}\n']);
    // After a lone frame the next one is written before write() returns, without waiting for the tick.
    void writer.write({ alone: 2 });
    assert.deepEqual(writes.slice(3), ['{"alone":2}\n']);
    void writer.write({ i: 0 });
    void writer.write({ i: 1 });
    assert.equal(writes.length, 4, "later frames of the same tick are corked");
    await afterTick();
    assert.deepEqual(writes.slice(4), [lines(0, 2)]);
    // That tick sent three frames (the lone one and two corked): the next tick's first frame waits.
    void writer.write({ after: 3 });
    assert.equal(writes.length, 5, "after a tick of several frames the first one waits");
    await afterTick();
    assert.deepEqual(writes.slice(5), ['{"after":3}\n']);
  });

  test("coalesce: a lone frame is written before anything is scheduled for its tick", async () => {
    // The other process waits for the write; the bookkeeping of the tick's end comes after it.
    let ticks = 0;
    const ticksAtWrite: number[] = [];
    const sink = new Writable({
      write(_chunk, _enc, cb) {
        ticksAtWrite.push(ticks);
        cb();
      },
    });
    const writer = new FrameWriter(sink, { coalesce: true });
    const afterTick = () => new Promise((r) => setImmediate(r));
    const original = process.nextTick;
    try {
      for (let i = 0; i < 3; i++) {
        ticks = 0;
        process.nextTick = ((...args: Parameters<typeof process.nextTick>) => {
          ticks++;
          return original(...args);
        }) as typeof process.nextTick;
        void writer.write({ i });
        process.nextTick = original;
        await afterTick();
      }
    } finally {
      process.nextTick = original;
    }
    assert.deepEqual(ticksAtWrite, [0, 0, 0]);
  });

  test("coalesce: frames sent while a lone frame's write is unfinished wait their turn, in order", async () => {
    const writes: string[] = [];
    const finish: (() => void)[] = [];
    // Each write finishes only when the test says so, as a pipe's write the kernel could not take at once.
    const sink = new Writable({
      highWaterMark: 1 << 20,
      write(chunk, _enc, cb) {
        writes.push(String(chunk));
        finish.push(cb);
      },
      writev(chunks, cb) {
        writes.push(chunks.map(({ chunk }) => String(chunk)).join(""));
        finish.push(cb);
      },
    });
    const writer = new FrameWriter(sink, { coalesce: true });
    const afterTick = () => new Promise((r) => setImmediate(r));
    void writer.write({ lone: 1 });
    await afterTick();
    // The lone frame's write is still open: the next ticks' frames are held by the stream behind it.
    void writer.write({ i: 0 });
    void writer.write({ i: 1 });
    await afterTick();
    void writer.write({ i: 2 });
    await afterTick();
    while (finish.length > 0) {
      finish.shift()!();
      await afterTick();
    }
    assert.deepEqual(writes.join(""), '{"lone":1}\n{"i":0}\n{"i":1}\n{"i":2}\n');
    // Once the writes have finished, one frame a tick leaves at once again.
    void writer.write({ lone: 2 });
    void writer.write({ lone: 2 }); // (a second frame in the same tick: corked, closes that tick)
    await afterTick();
    while (finish.length > 0) {
      finish.shift()!();
      await afterTick();
    }
    void writer.write({ lone: 3 });
    await afterTick();
    while (finish.length > 0) {
      finish.shift()!();
      await afterTick();
    }
    void writer.write({ lone: 4 });
    assert.equal(writes.at(-1), '{"lone":4}\n', "written before write() returned");
  });

  test("coalesceMaxFrames: a tick's frames leave in writes of at most that many, in order", async () => {
    const { sink, writes } = recordingSink();
    const writer = new FrameWriter(sink, { coalesce: true, coalesceMaxFrames: 8 });
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `{"i":${from + i}}\n`).join("");
    await Promise.all(Array.from({ length: 20 }, (_, i) => writer.write({ i })));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes, [lines(0, 1), lines(1, 9), lines(9, 17), lines(17, 20)]);
    await Promise.all(Array.from({ length: 20 }, (_, i) => writer.write({ i })));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(writes.slice(4), [lines(0, 8), lines(8, 16), lines(16, 20)]);
    assert.throws(() => new FrameWriter(sink, { coalesce: true, coalesceMaxFrames: 0 }), RangeError);
  });

  test("strict serialization equals JSON.stringify with a refusing replacer, for any value", () => {
    const refuse = (_key: string, v: unknown) => {
      if ((typeof v === "number" && !Number.isFinite(v)) || typeof v === "bigint")
        throw new TypeError("refused");
      return v;
    };
    const outcome = (f: () => string | undefined) => {
      try {
        return { json: f() };
      } catch (error) {
        return { threw: error instanceof TypeError };
      }
    };
    const withDates = fc.oneof(
      fc.anything({ withBigInt: true, withBoxedValues: true }),
      fc.date().map((d) => ({ d })),
    );
    fc.assert(
      fc.property(withDates, fc.double(), (value, n) => {
        for (const v of [value, { value, n }, [value, n]]) {
          assert.deepEqual(
            outcome(() => stringifyStrict(v)),
            outcome(() => JSON.stringify(v, refuse)),
          );
        }
      }),
      { numRuns: 300 },
    );
    const deep: Record<string, unknown> = { n: Number.NaN };
    let nested = deep;
    for (let i = 0; i < 40; i++) nested = { nested };
    assert.throws(() => stringifyStrict(nested), TypeError);
  });

  test("respects backpressure: waits for drain and keeps frame order", async () => {
    const received: string[] = [];
    let release: (() => void) | undefined;
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk, _enc, cb) {
        received.push(String(chunk));
        release = cb; // completes only when the test says so
      },
    });
    const writer = new FrameWriter(slow);
    const writes = Array.from({ length: 5 }, (_, i) => writer.write({ i, pad: "xxxxxxxxxxxxxxxx" }));
    await new Promise((r) => setImmediate(r));
    assert.ok(writer.queuedFrames > 0, "later frames wait behind backpressure");
    while (received.length < 5) {
      const r = release;
      release = undefined;
      r?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    release?.();
    await Promise.all(writes);
    const joined = received.join("");
    assert.deepEqual(
      joined
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).i),
      [0, 1, 2, 3, 4],
    );
  });
});
