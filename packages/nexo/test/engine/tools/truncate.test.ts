import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HeadTailCapture, truncateHead } from "../../../src/engine/tools/truncate.js";

function capture(maxBytes: number, chunks: string[]) {
  const collector = new HeadTailCapture(maxBytes);
  for (const chunk of chunks) collector.push(Buffer.from(chunk, "utf8"));
  return collector;
}

describe("truncateHead", () => {
  it("leaves short text alone", () => {
    assert.deepEqual(truncateHead("hello", 5), { text: "hello", cutBytes: 0 });
  });

  it("cuts at a character boundary and counts what was cut", () => {
    assert.deepEqual(truncateHead("aé€", 4), {
      text: "aé\n[… output truncated: 3 of 6 bytes cut …]",
      cutBytes: 3,
    });
    assert.deepEqual(truncateHead("€€", 4), {
      text: "€\n[… output truncated: 3 of 6 bytes cut …]",
      cutBytes: 3,
    });
  });
});

describe("HeadTailCapture", () => {
  it("keeps everything that fits", () => {
    const collector = capture(10, ["abc", "def"]);
    assert.deepEqual(collector.render(), { text: "abcdef", cutBytes: 0 });
    assert.equal(collector.totalBytes, 6);
  });

  it("keeps the first and last half of the budget across chunk boundaries", () => {
    const chunks = "abcdefghijklmnopqrstuvwxyz".match(/.{1,3}/g) ?? [];
    const collector = capture(10, chunks);
    assert.deepEqual(collector.render(), {
      text: "abcde\n[… output truncated: 16 of 26 bytes cut …]\nvwxyz",
      cutBytes: 16,
    });
  });

  it("drops characters split by either cut", () => {
    // Head keeps 3 bytes (one é and half of the next), tail keeps 2 (the last é).
    assert.deepEqual(capture(5, ["ééé"]).render(), {
      text: "é\n[… output truncated: 2 of 6 bytes cut …]\né",
      cutBytes: 2,
    });
    // Head keeps "xxx" and the lead byte of a "€"; tail keeps a lone continuation byte and a "€".
    assert.deepEqual(capture(8, ["xxx", "€€€"]).render(), {
      text: "xxx\n[… output truncated: 6 of 12 bytes cut …]\n€",
      cutBytes: 6,
    });
  });
});
