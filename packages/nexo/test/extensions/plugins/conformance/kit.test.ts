/**
 * The conformance kit's own parts: the structural matcher both sides use, the scenario format's
 * validation (a typo must be an error, never a skipped check), and the reading of the child's
 * report.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { childProblems, type ReportEntry, runsStarted } from "./child-report.js";
import { MatcherError, match } from "./match.mjs";
import { loadScenario, ScenarioFormatError } from "./scenario.js";

describe("match", () => {
  it("matches objects as subsets, arrays element by element, primitives strictly", () => {
    assert.deepEqual(match({ a: 1 }, { a: 1, b: 2 }), []);
    assert.deepEqual(match({ a: { b: [1, "x"] } }, { a: { b: [1, "x"], c: 0 } }), []);
    assert.deepEqual(match([1, 2], [1, 2, 3]), ["$: expected 2 element(s), got 3: [1,2,3]"]);
    assert.deepEqual(match({ a: 1 }, { a: "1" }), ['$.a: expected 1, got "1"']);
    assert.deepEqual(match({ a: null }, {}), ["$.a: missing, expected null"]);
    assert.deepEqual(match({ a: 1 }, [1]), ["$: expected an object, got [1]"]);
  });

  it("applies every operator", () => {
    assert.deepEqual(match({ a: { $absent: true } }, {}), []);
    assert.equal(match({ a: { $absent: true } }, { a: null }).length, 1);
    assert.deepEqual(match({ $any: true }, 0), []);
    assert.equal(match({ a: { $any: true } }, {}).length, 1);
    assert.deepEqual(match({ $type: "integer" }, 3), []);
    assert.deepEqual(match({ $type: "number" }, 3), [], "an integer is a number");
    assert.equal(match({ $type: "integer" }, 3.5).length, 1);
    assert.deepEqual(match({ $type: ["string", "null"] }, null), []);
    assert.deepEqual(match({ $regex: "^ab+$" }, "abbb"), []);
    assert.equal(match({ $regex: "a" }, 1).length, 1);
    assert.deepEqual(match({ $gte: 2, $lt: 3 }, 2), []);
    assert.equal(match({ $gt: 2 }, 2).length, 1);
    assert.equal(match({ $lte: 1 }, "0").length, 1);
    assert.deepEqual(match({ $exact: { a: [1] } }, { a: [1] }), []);
    assert.equal(match({ $exact: { a: 1 } }, { a: 1, b: 2 }).length, 1, "$exact allows no extra keys");
    assert.deepEqual(match({ $contains: { id: 2 } }, [{ id: 1 }, { id: 2, x: 0 }]), []);
    assert.equal(match({ $contains: 5 }, [1]).length, 1);
    assert.deepEqual(match({ $length: { $gte: 2 } }, "abc"), []);
    assert.deepEqual(match({ $exact: { $schema: "x" } }, { $schema: "x" }), [], "$exact quotes $ keys");
  });

  it("refuses unknown operators and types: the scenario is wrong", () => {
    assert.throws(() => match({ $regexp: "a" }, "a"), MatcherError);
    assert.throws(() => match({ $type: "str" }, "a"), MatcherError);
  });
});

describe("scenario format", () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-conformance-kit-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const valid = {
    name: "ok",
    title: "A scenario",
    covers: ["§4.1"],
    manifest: { plugin: { id: "conf", version: "0.1.0" } },
    child: { runs: [{ steps: [{ do: "handshake" }] }] },
    host: [{ do: "start" }],
  };
  const write = (name: string, value: unknown): string => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(value));
    return file;
  };
  const problems = (name: string, value: unknown): string => {
    try {
      loadScenario(write(name, value));
    } catch (error) {
      assert.ok(error instanceof ScenarioFormatError);
      return error.message;
    }
    assert.fail("the scenario was accepted");
  };

  it("accepts a minimal scenario", () => {
    assert.equal(loadScenario(write("ok", valid)).name, "ok");
  });

  it("names the path of a misspelt step, expectation or field", () => {
    const step = { ...valid, name: "bad", child: { runs: [{ steps: [{ do: "handshak" }] }] } };
    assert.match(problems("bad", step), /child\.runs\.0\.steps\.0\.do/);
    const field = { ...valid, name: "bad", host: [{ do: "start", expct: {} }] };
    assert.match(problems("bad", field), /host\.0: .*expct/);
  });

  it("refuses a terminal step before the end of a run, and an entrypoint in the manifest", () => {
    const early = {
      ...valid,
      name: "bad",
      child: { runs: [{ steps: [{ do: "hang" }, { do: "handshake" }] }] },
    };
    assert.match(problems("bad", early), /may only be the last step/);
    const entry = {
      ...valid,
      name: "bad",
      manifest: { plugin: { id: "conf", version: "0.1.0", entrypoint: { command: "x" } } },
    };
    assert.match(problems("bad", entry), /runner writes \[plugin\.entrypoint\]/);
  });

  it("refuses a reply with both a result and an error, and a name that is not the file's", () => {
    const both = {
      ...valid,
      name: "bad",
      child: {
        runs: [
          {
            steps: [
              { do: "expect_request", method: "x", reply: { result: 1, error: { code: 1, message: "m" } } },
            ],
          },
        ],
      },
    };
    assert.match(problems("bad", both), /exactly one of result, error or none/);
    assert.match(problems("other", valid), /does not match the file name/);
  });
});

describe("child report", () => {
  const entry = (run: number, event: string, extra: Partial<ReportEntry> = {}): ReportEntry => ({
    run,
    event,
    ...extra,
  });

  it("passes only runs that completed without a mismatch or an unexpected frame", () => {
    const good = [entry(0, "start"), entry(0, "step", { step: 0, do: "handshake" }), entry(0, "complete")];
    assert.deepEqual(childProblems(good), []);
    assert.equal(runsStarted(good), 1);
    const cut = [...good, entry(1, "start"), entry(1, "step", { step: 0, do: "handshake" })];
    assert.deepEqual(childProblems(cut), [
      "run 1 did not finish its script (last step started: 0 handshake)",
    ]);
    const bad = [...good, entry(0, "unexpected", { frame: { method: "x" } })];
    assert.match(childProblems(bad).join(), /unexpected frame after the script: \{"method":"x"\}/);
    assert.deepEqual(childProblems([]), ["the scripted child never started"]);
  });
});
