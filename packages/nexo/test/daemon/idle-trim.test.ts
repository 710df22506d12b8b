/**
 * The idle trim (daemon/idle-trim.ts) in this test process, with the real memory-reducing
 * collection: it runs once the process is quiet and the heap has grown, gives memory back, does not
 * run again until the heap has grown again, and waits while turns are in flight or the event loop
 * is busy. The collection itself, through the inspector's native connection and through the
 * `node:inspector` fallback, empties the young generation.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";
import {
  IdleTrim,
  idleTrimEnabled,
  reduceMemory,
  reduceMemoryThroughSession,
} from "../../src/daemon/idle-trim.js";
import { createLogger } from "../../src/log.js";

const logger = createLogger({ base: { component: "test" }, level: "silent" });
const QUIET_MS = 150;

/** Short-lived objects enough to grow the young generation's resident pages past the threshold. */
function churn(megabytes: number): void {
  let keep: unknown[] = [];
  for (let i = 0; i < megabytes * 1000; i++) {
    keep.push({ i, text: `item ${i}`, list: [i, i + 1, i + 2] });
    if (keep.length > 20_000) keep = [];
  }
}

/** The young generation's resident bytes. */
function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.physical_space_size ?? 0;
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(25);
  }
}

test("a quiet process whose heap grew is trimmed once, and again only after it grew again", async () => {
  churn(40);
  const trim = new IdleTrim({ turnsInFlight: () => 0, logger, quietMs: QUIET_MS });
  try {
    await until(() => trim.trims === 1);
    const report = trim.lastReport!;
    assert.ok(
      report.heapAfterMB < report.heapBeforeMB,
      `the heap did not shrink: ${report.heapBeforeMB} -> ${report.heapAfterMB} MB`,
    );
    assert.ok(report.heapAfterMB >= report.liveMB);
    // Quiet, and nothing grew: no second trim.
    await sleep(QUIET_MS * 6);
    assert.equal(trim.trims, 1);
    // Work that grows the heap again, then quiet: one more.
    const before = getHeapStatistics().total_physical_size;
    churn(60);
    assert.ok(
      getHeapStatistics().total_physical_size - before > 1_000_000,
      "the churn did not grow the heap",
    );
    await until(() => trim.trims === 2);
  } finally {
    trim.stop();
  }
});

test("the collection gives the young generation back, through the inspector's connection and through node:inspector alike", async () => {
  for (const collect of [reduceMemory, reduceMemoryThroughSession]) {
    churn(40);
    const before = newSpaceBytes();
    await collect();
    const after = newSpaceBytes();
    assert.ok(after < before && after < 1_000_000, `${collect.name}: new space ${before} -> ${after} bytes`);
  }
});

test("no trim while a turn is in flight or the event loop is busy", async () => {
  let turns = 1;
  churn(40);
  const trim = new IdleTrim({ turnsInFlight: () => turns, logger, quietMs: QUIET_MS });
  try {
    await sleep(QUIET_MS * 5);
    assert.equal(trim.trims, 0, "trimmed during a turn");
    // Busy (the event loop runs ~60% of the time) from before the turn ends until after.
    const busy = setInterval(() => {
      const end = performance.now() + 30;
      while (performance.now() < end);
    }, 50);
    await sleep(QUIET_MS * 2);
    turns = 0;
    await sleep(QUIET_MS * 5);
    clearInterval(busy);
    assert.equal(trim.trims, 0, "trimmed while the event loop was busy");
    await until(() => trim.trims === 1);
  } finally {
    trim.stop();
  }
});

test("a collection that fails stops the trim for good", async () => {
  churn(40);
  let calls = 0;
  const trim = new IdleTrim({
    turnsInFlight: () => 0,
    logger,
    quietMs: QUIET_MS,
    collect: async () => {
      calls += 1;
      throw new Error("no inspector in this node");
    },
  });
  await until(() => calls === 1);
  churn(60);
  await sleep(QUIET_MS * 5);
  assert.equal(calls, 1);
  assert.equal(trim.trims, 0);
  trim.stop();
});

test("NEXO_IDLE_TRIM turns it off with off, 0, false or no", () => {
  for (const value of ["off", "0", "false", "no", " OFF "])
    assert.equal(idleTrimEnabled({ NEXO_IDLE_TRIM: value }), false);
  for (const value of [undefined, "", "on", "1"])
    assert.equal(idleTrimEnabled({ NEXO_IDLE_TRIM: value }), true);
});
