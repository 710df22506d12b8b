import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { isoTime } from "../src/iso-time.js";
import { withoutLocalDateMethods } from "./helpers/local-date-methods.js";

/** The range a Date can hold: ±8.64e15 ms around the epoch (years -271821 to 275760). */
const LIMIT = 8.64e15;

function same(ms: number): void {
  assert.equal(isoTime(ms), new Date(ms).toISOString(), `at ${ms}`);
  assert.equal(isoTime(new Date(ms)), new Date(ms).toISOString(), `a Date at ${ms}`);
}

test("isoTime writes what toISOString writes at the edges of the year formats and of the range", () => {
  const edges = [
    0,
    -1,
    1,
    LIMIT,
    -LIMIT,
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1),
    Date.UTC(0, 0, 1) - 1, // the last millisecond of year -1
    new Date("0000-01-01T00:00:00.000Z").getTime(),
    new Date("-000001-12-31T23:59:59.999Z").getTime(),
    Date.UTC(2024, 1, 29, 12, 0, 0, 5), // a leap day
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    0.9, // a fraction of a millisecond is dropped by the Date
    -0.5,
  ];
  for (const ms of edges) same(ms);
});

test("isoTime writes what toISOString writes for random instants across the whole range and near now", () => {
  for (let i = 0; i < 20_000; i++) same(Math.trunc((Math.random() * 2 - 1) * LIMIT));
  for (let i = 0; i < 20_000; i++) same(Date.now() + Math.trunc((Math.random() * 2 - 1) * 1e12));
});

test("isoTime takes now when given nothing", () => {
  const before = Date.now();
  const stamped = Date.parse(isoTime());
  assert.ok(stamped >= before && stamped <= Date.now(), `${stamped} not within [${before}, ${Date.now()}]`);
});

test("an invalid date throws the RangeError toISOString throws", () => {
  for (const bad of [Number.NaN, LIMIT + 1, -LIMIT - 1, Number.POSITIVE_INFINITY, new Date("not a date")]) {
    const expected = (() => {
      try {
        (typeof bad === "number" ? new Date(bad) : bad).toISOString();
      } catch (error) {
        return error as RangeError;
      }
      throw new Error("toISOString accepted it");
    })();
    assert.throws(
      () => isoTime(bad),
      (error: unknown) => error instanceof RangeError && error.message === expected.message,
    );
  }
});

test("isoTime calls none of the Date methods that look up the local time zone", () => {
  const expected = new Date(1_700_000_000_123).toISOString();
  withoutLocalDateMethods(() => {
    assert.equal(isoTime(1_700_000_000_123), expected);
    assert.equal(isoTime(new Date(1_700_000_000_123)), expected);
    assert.throws(() => new Date(0).toISOString(), /toISOString was called/);
  });
});

/** Files allowed to call a `toISOString`: smol-toml's TomlDate has its own, which writes TOML's date forms. */
const OWN_TO_ISO_STRING = new Set(["config/toml-source.ts"]);

test("no source file stamps a time with Date.prototype.toISOString, toJSON or toUTCString", () => {
  // One such call anywhere on the daemon's paths pages ICU's time-zone names in for the process's
  // life (~0.9 MB, docs/performance.md "Eighth pass (b)"); isoTime() writes the same text.
  const src = fileURLToPath(new URL("../src/", import.meta.url));
  const offenders: string[] = [];
  for (const entry of readdirSync(src, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".ts") || OWN_TO_ISO_STRING.has(entry)) continue;
    const text = readFileSync(join(src, entry), "utf8");
    text.split("\n").forEach((line, index) => {
      const code = line.replace(/\/\/.*$/, "").replace(/^\s*\*.*$/, "");
      if (/\.toISOString\(|\.toUTCString\(|\bnew Date\([^)]*\)\.toJSON\(/.test(code))
        offenders.push(`${entry}:${index + 1}`);
    });
  }
  assert.deepEqual(offenders, [], "use isoTime() from src/iso-time.ts");
});
