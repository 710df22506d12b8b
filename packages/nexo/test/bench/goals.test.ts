/**
 * Issue 15.5: the goals checker (bench/goals.ts) judges a goal by the rows that carry the issue's
 * own goal, names the goals nothing answers, and the README's performance table is what
 * bench/results/latest.json says (bench/readme-table.ts).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { evaluate, type Goal, type Latest, readLatest, report } from "../../../../bench/goals.js";
import { README, renderTable, withTable } from "../../../../bench/readme-table.js";

const GOALS: Goal[] = [
  {
    id: "fast",
    measure: "ours / theirs, calls/s",
    goal: "≥ 2×",
    rows: [{ benchmark: "b", name: /^calls c=\d+ nexo$/ }],
    accepts: (g) => g.min === 2,
    ratio: "nexo/theirs",
  },
  {
    id: "small",
    measure: "idle RSS",
    goal: "≤ 60 MB",
    rows: [{ benchmark: "d", name: /^idle RSS/ }],
    accepts: (g) => g.max === 60,
  },
  {
    id: "either",
    measure: "ready / Codex's",
    goal: "≤ 1.5×",
    rows: [
      { benchmark: "one", name: /^ready/ },
      { benchmark: "two", name: /^ready/ },
    ],
    accepts: (g) => g.max === 1.5,
  },
  { id: "absent", measure: "never measured", goal: "≤ 1×", rows: [{ name: /nothing/ }], accepts: () => true },
];

const row = (benchmark: string, name: string, extra: object = {}) => ({
  benchmark,
  name,
  value: 1,
  unit: "x",
  measuredAt: "2026-12-02T00:00:00.000Z",
  ...extra,
});

const FIXTURE: Latest = {
  results: [
    row("b", "calls c=1 nexo", {
      ratios: { "nexo/theirs": 2.5 },
      goal: { ratio: "nexo/theirs", min: 2, met: true },
    }),
    row("b", "calls c=16 nexo", {
      ratios: { "nexo/theirs": 1.4 },
      goal: { ratio: "nexo/theirs", min: 2, met: false },
    }),
    row("b", "calls c=1 theirs"),
    // A looser bound written before the issue does not answer it.
    row("d", "idle RSS local", { goal: { ratio: "MB", max: 100, met: true } }),
    // One benchmark measures without judging, another judges: the judging one decides.
    row("one", "ready, nexo"),
    row("two", "ready, nexo", {
      ratios: { "nexo/codex": 1.2 },
      goal: { ratio: "nexo/codex", max: 1.5, met: true },
    }),
  ],
};

describe("bench goals checker", () => {
  it("judges by the rows carrying the issue's goal and names what nothing answers", () => {
    const verdicts = evaluate(FIXTURE, GOALS);
    assert.deepEqual(
      verdicts.map((v) => [v.goal.id, v.status, v.rows.length]),
      [
        ["fast", "missed", 2],
        ["small", "no goal", 1],
        ["either", "met", 2],
        ["absent", "no row", 0],
      ],
    );
    const text = report(verdicts);
    assert.match(text, /calls c=16 nexo \| nexo\/theirs = 1\.4 \(1 x\) \| nexo\/theirs >= 2: MISSED/);
    assert.match(text, /idle RSS local \| 1 x \| its goal \(MB <= 100\) is not the issue's/);
    assert.match(text, /one \| ready, nexo \| 1 x \| no goal\/met on the row/);
    assert.match(text, /4 goals: 1 met, 1 missed, 2 unanswered \(absent, small\)/);
  });

  it("a goal every judging row met is met; one miss among them makes it missed", () => {
    const allMet: Latest = {
      results: FIXTURE.results.map((r) => (r.goal ? { ...r, goal: { ...r.goal, met: true } } : r)),
    };
    assert.equal(evaluate(allMet, GOALS)[0]!.status, "met");
  });

  it("renders and replaces the README table between its markers, and refuses a README without them", () => {
    const table = renderTable(FIXTURE);
    const readme = `intro\n${renderTable({ results: [] })}\noutro\n`;
    const next = withTable(readme, FIXTURE);
    assert.equal(next, `intro\n${table}\noutro\n`);
    assert.throws(() => withTable("no markers here", FIXTURE), /no performance-table markers/);
  });

  it("README.md's performance table is what bench/results/latest.json says", () => {
    const readme = readFileSync(README, "utf8");
    assert.equal(
      readme,
      withTable(readme, readLatest()),
      "README.md's performance table is stale: run `node --import tsx bench/readme-table.ts`",
    );
  });
});
