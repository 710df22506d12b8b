import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LineSearch, type MatchedLines, RegexTimeoutError } from "../../../src/engine/tools/line-matcher.js";

const bytes = (text: string) => Buffer.from(text, "utf8");

async function run(
  regex: RegExp,
  files: [string, string][],
  options: { lines: boolean; timeoutMs?: number; signal?: AbortSignal; maxLinesPerFile?: number },
): Promise<[string, MatchedLines][]> {
  const found: [string, MatchedLines][] = [];
  const search = await LineSearch.start(
    regex,
    {
      timeoutMs: options.timeoutMs ?? 10_000,
      signal: options.signal ?? new AbortController().signal,
      lines: options.lines,
      maxLineChars: 10,
      maxLinesPerFile: options.maxLinesPerFile ?? 100,
    },
    (tag: string, lines) => found.push([tag, lines]),
  );
  try {
    for (const [tag, text] of files) await search.add(tag, bytes(text));
    await search.finish();
  } finally {
    search.close();
  }
  return found;
}

describe("LineSearch", () => {
  it("reports matching files in the order they were added, across many batches", async () => {
    const files: [string, string][] = Array.from({ length: 200 }, (_, i) => [
      `f${i}`,
      i % 7 === 0 ? `x\nneedle ${i}\n` : "nothing\n",
    ]);
    const found = await run(/needle/, files, { lines: false });
    assert.deepEqual(
      found.map(([tag]) => tag),
      files.filter((_, i) => i % 7 === 0).map(([tag]) => tag),
    );
    assert.ok(found.every(([, lines]) => lines.length === 0));
  });

  it("gives 1-based line numbers without the CR, keeps a BOM, and cuts long lines", async () => {
    const found = await run(/b/, [["f", "\uFEFFab\r\nc\nbbbbbbbbbbbbbbbb\n"]], { lines: true });
    assert.deepEqual(found, [
      [
        "f",
        [
          { number: 1, text: "\uFEFFab" },
          { number: 3, text: "bbbbbbbbbb …" },
        ],
      ],
    ]);
    const capped = await run(/a/, [["f", "a\na\na\n"]], { lines: true, maxLinesPerFile: 2 });
    assert.equal(capped[0]![1].length, 2);
  });

  it("ends a runaway regex at the time limit", async () => {
    await assert.rejects(
      run(/(a+)+$/, [["f", `${"a".repeat(100)}!`]], { lines: false, timeoutMs: 200 }),
      (error) => {
        assert.ok(error instanceof RegexTimeoutError);
        assert.equal(error.timeoutMs, 200);
        return true;
      },
    );
  });

  it("ends a runaway regex when the call is cancelled", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(
      run(/(a+)+$/, [["f", `${"a".repeat(100)}!`]], { lines: false, signal: controller.signal }),
      /Search cancelled/,
    );
  });

  it("refuses stateful regexes", async () => {
    await assert.rejects(run(/a/g, [], { lines: false }), /without the g or y flag/);
  });
});
