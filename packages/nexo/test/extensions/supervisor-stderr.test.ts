/**
 * stderr is captured line by line into the injected logger (tagged with the child's id, at the
 * level a `[WARN]`/`[ERROR]` prefix asks for) and only a bounded tail is kept; an endless line is
 * cut instead of buffered. Unit checks of the splitter and ring buffer, then a real child.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import {
  DEFAULT_STDERR_TAIL_LINES,
  RingBuffer,
  StderrLineSplitter,
  stderrLevel,
} from "../../src/extensions/stderr-capture.js";
import { Supervisor } from "../../src/extensions/supervisor.js";
import { createLogger } from "../../src/log.js";
import { fixture, recordingLogger } from "../fixtures/processes.js";

describe("stderr capture pieces", () => {
  it("the ring buffer keeps the newest items, oldest first", () => {
    const ring = new RingBuffer<number>(3);
    for (let i = 1; i <= 7; i++) ring.push(i);
    assert.deepEqual(ring.toArray(), [5, 6, 7]);
    assert.equal(ring.size, 3);
    const none = new RingBuffer<number>(0);
    none.push(1);
    assert.deepEqual(none.toArray(), []);
    assert.throws(() => new RingBuffer(-1), RangeError);
  });

  it("splits across chunk boundaries, strips CR, skips blank lines, flushes the last line at end", () => {
    const lines: string[] = [];
    const splitter = new StderrLineSplitter((line) => lines.push(line), 64);
    splitter.push(Buffer.from("fir"));
    splitter.push(Buffer.from("st\r\n\n  \nsec"));
    splitter.push(Buffer.from("ond\nthi"));
    splitter.end();
    assert.deepEqual(lines, ["first", "second", "thi"]);
  });

  it("cuts a line longer than the limit and says how much was dropped", () => {
    const lines: string[] = [];
    const splitter = new StderrLineSplitter((line) => lines.push(line), 10);
    splitter.push(Buffer.from("abcdefgh"));
    splitter.push(Buffer.from("ijklmnop\nshort\n"));
    assert.deepEqual(lines, ["abcdefghij … [6 more bytes dropped]", "short"]);
  });

  it("maps level prefixes", () => {
    assert.equal(stderrLevel("[WARN] x"), "warn");
    assert.equal(stderrLevel("[error] x"), "error");
    assert.equal(stderrLevel("[DEBUG] x"), "debug");
    assert.equal(stderrLevel("plain text [ERROR] later"), "info");
  });
});

describe("a real child's stderr", () => {
  it("is logged line by line with the child's id and only the last N lines are kept", async () => {
    const logger = recordingLogger();
    const supervisor = new Supervisor({
      id: "noisy",
      spawn: { command: process.execPath, args: [fixture("stderr-spam.mjs"), "500", "20000"], env: {} },
      stderrTailLines: 50,
      stderrMaxLineBytes: 1024,
      // Above the 504 lines written: the log budget is log-budget.test.ts's subject.
      stderrLogLines: 1_000,
      logger,
    });
    const incarnation = await supervisor.start();
    await once(incarnation.stdout, "data"); // "done": every stderr byte has been written
    await supervisor.stop();

    const stderrLogs = logger.entries.filter((entry) => entry.fields.stream === "stderr");
    assert.equal(stderrLogs.length, 500 + 1 + 2 + 1);
    assert.ok(stderrLogs.every((entry) => entry.fields.extension === "noisy"));
    assert.ok(stderrLogs.every((entry) => entry.fields.pid === incarnation.pid));
    assert.equal(stderrLogs[0]?.message, "line 1");
    assert.equal(stderrLogs.find((entry) => entry.message === "[WARN] careful")?.level, "warn");
    assert.equal(stderrLogs.find((entry) => entry.message === "[ERROR] broken")?.level, "error");

    const tail = supervisor.stderrTail();
    assert.equal(tail.length, 50);
    assert.equal(tail[0], "line 455");
    const longLine = tail.at(-4)!;
    assert.equal(longLine, `${"x".repeat(1024)} … [${20000 - 1024} more bytes dropped]`);
    assert.deepEqual(tail.slice(-3), ["[WARN] careful", "[ERROR] broken", "partial-without-newline"]);
  });

  it(`keeps ${DEFAULT_STDERR_TAIL_LINES} lines by default`, async () => {
    const supervisor = new Supervisor({
      id: "noisy-default",
      spawn: { command: process.execPath, args: [fixture("stderr-spam.mjs"), "300", "10"], env: {} },
    });
    const incarnation = await supervisor.start();
    await once(incarnation.stdout, "data");
    await supervisor.stop();
    const tail = supervisor.stderrTail();
    assert.equal(tail.length, 200);
    assert.equal(tail[0], "line 105");
  });

  it("goes through a real pino logger as JSON lines tagged with the child's id", async () => {
    const written: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        written.push(String(chunk));
        callback();
      },
    });
    const supervisor = new Supervisor({
      id: "pino-child",
      spawn: { command: process.execPath, args: [fixture("stderr-spam.mjs"), "2", "10"], env: {} },
      logger: createLogger({ level: "info", destination }),
    });
    const incarnation = await supervisor.start();
    await once(incarnation.stdout, "data");
    await supervisor.stop();
    const records = written
      .join("")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const stderrRecords = records.filter((record) => record.stream === "stderr");
    assert.deepEqual(
      stderrRecords.slice(0, 2).map((record) => [record.extension, record.msg]),
      [
        ["pino-child", "line 1"],
        ["pino-child", "line 2"],
      ],
    );
    assert.equal(stderrRecords.find((record) => record.msg === "[ERROR] broken")?.level, 50);
  });
});
