/**
 * A child cannot flood the daemon's log: the budget's arithmetic with a fake clock, then a real
 * plugin (fixtures/plugins/spammer) that writes 20,000 unusable stdout frames, 20,000 stderr lines
 * and 20,000 refused broker.publish notifications in a burst, through the real PluginManager.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { LocalBroker } from "../../src/broker/local.js";
import { LogBudget } from "../../src/extensions/log-budget.js";
import { PluginManager } from "../../src/extensions/plugins/index.js";
import { ProcessGroupRegistry } from "../../src/extensions/reaper.js";
import { baseEnv, pluginDir } from "../fixtures/plugins/harness.js";
import { type LogEntry, recordingLogger, waitUntil } from "../fixtures/processes.js";

const root = mkdtempSync(join(tmpdir(), "nexo-log-budget-"));
after(() => rmSync(root, { recursive: true, force: true }));

const SUMMARY = /^(\d+) more (.+) in the last (\d+) s$/;

function summaries(entries: LogEntry[], what: string): number[] {
  return entries.flatMap((entry) => {
    const match = SUMMARY.exec(entry.message ?? "");
    return match !== null && match[2] === what ? [Number(match[1])] : [];
  });
}

describe("LogBudget", () => {
  it("logs up to maxLines per window, counts the rest, and summarises them once per window", () => {
    let now = 1_000_000;
    const logger = recordingLogger();
    const budget = new LogBudget({
      logger,
      maxLines: 3,
      windowMs: 10_000,
      what: "stderr lines",
      fields: { plugin: "p" },
      now: () => now,
    });
    for (let i = 0; i < 10; i++) budget.log("info", { i }, `line ${i}`);
    assert.deepEqual(
      logger.entries.map((e) => e.message),
      ["line 0", "line 1", "line 2"],
    );
    now += 10_000; // the next window: the summary of the last one comes first
    budget.log("info", {}, "line 10");
    assert.deepEqual(
      logger.entries.slice(3).map((e) => [e.level, e.message]),
      [
        ["warn", "7 more stderr lines in the last 10 s"],
        ["info", "line 10"],
      ],
    );
    assert.deepEqual(logger.entries[3]?.fields, {
      plugin: "p",
      suppressed: 7,
      window_ms: 10_000,
      last: "line 9",
    });
    budget.flush();
    assert.equal(logger.entries.length, 5, "nothing left out, nothing to summarise");
  });

  it("a pending summary is written when the window closes, without further lines", async () => {
    const logger = recordingLogger();
    const budget = new LogBudget({
      logger,
      maxLines: 1,
      windowMs: 50,
      what: "protocol warnings",
      fields: {},
    });
    budget.log("warn", {}, "a");
    budget.log("warn", {}, "b");
    await waitUntil(() => logger.entries.length === 2, 2_000, "the summary");
    assert.match(logger.entries[1]?.message ?? "", /^1 more protocol warnings in the last 1 s$/);
  });
});

describe("a real plugin flooding the host", () => {
  it("keeps the log bounded and says how many lines it left out", async () => {
    const lines = 20_000;
    const logger = recordingLogger();
    const broker = new LocalBroker({ logger: recordingLogger() as never });
    const groups = new ProcessGroupRegistry();
    const manager = new PluginManager({
      plugins: [pluginDir("spammer")],
      stateRoot: join(root, "state"),
      env: baseEnv(),
      broker,
      settings: { spammer: { env: { FLOOD_LINES: String(lines) } } },
      logger,
      processGroups: groups,
      shutdownTimeoutMs: 1_000,
    });
    try {
      const [status] = await manager.start();
      assert.equal(status?.state, "running");
      const host = manager.host("spammer")!;
      await waitUntil(
        () =>
          host.status().stderrTail.at(-1) === "flood done" &&
          host.status().protocolProblems.parse_error === lines &&
          manager.status()[0]?.bridge?.rejected === lines,
        60_000,
        "the whole flood to arrive",
      );
    } finally {
      await manager.stop();
      groups.killAll();
      await broker.close();
    }

    const stderrLogged = logger.entries.filter(
      (e) => e.fields.stream === "stderr" && e.fields.suppressed === undefined,
    ).length;
    // Whatever the peer's wording, its lines carry the peer's name.
    const frameWarnings = logger.entries.filter(
      (e) => e.fields.peer !== undefined && e.fields.suppressed === undefined,
    ).length;
    const publishWarnings = logger.entries.filter((e) =>
      /^broker\.publish dropped/.test(e.message ?? ""),
    ).length;
    // Every line is accounted for: logged, or counted in a summary.
    const stderrSummarised = summaries(logger.entries, "stderr lines").reduce((a, b) => a + b, 0);
    const protocolSummarised = summaries(logger.entries, "protocol warnings").reduce((a, b) => a + b, 0);
    assert.ok(stderrSummarised > 0 && protocolSummarised > 0, "the summary lines appear");
    assert.equal(stderrLogged + stderrSummarised, lines + 1, "every stderr line (and 'flood done')");
    assert.equal(frameWarnings + publishWarnings + protocolSummarised, 2 * lines, "every protocol warning");
    // The bound: at most a window's budget per window (the burst fits in a few windows) plus summaries.
    assert.ok(stderrLogged <= 200 * 4, `stderr lines logged: ${stderrLogged}`);
    assert.ok(
      frameWarnings + publishWarnings <= 20 * 4,
      `protocol warnings logged: ${frameWarnings + publishWarnings}`,
    );
    assert.ok(
      logger.entries.length < 1_200,
      `log lines in all: ${logger.entries.length} for ${3 * lines} events`,
    );
  });
});
