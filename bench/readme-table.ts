/**
 * The README's performance table, generated from bench/results/latest.json so it never drifts:
 * one line per goal of issue 15 (bench/goals.ts) with the figures that answer it. `npm run bench`
 * rewrites it after every run; `node --import tsx bench/readme-table.ts` does it by hand, and a test
 * fails when the README's table is not what latest.json says.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { evaluate, type Latest, readLatest, type Verdict } from "./goals.js";

export const README = fileURLToPath(new URL("../README.md", import.meta.url));
export const BEGIN =
  "<!-- performance-table:begin — generated from bench/results/latest.json by bench/readme-table.ts; do not edit -->";
export const END = "<!-- performance-table:end -->";

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function figures(v: Verdict): string {
  if (v.rows.length === 0) return "not measured yet";
  // Rows that judge the goal when there are any; else every row that measures it.
  const judged = v.rows.filter((r) => r.goal !== undefined);
  return (judged.length > 0 ? judged : v.rows)
    .map((r) => `${r.row.benchmark} ${r.row.name}: ${r.shown}${r.goal && !r.goal.met ? " ✗" : ""}`)
    .join("<br>");
}

function measuredOn(v: Verdict): string {
  const dates = v.rows.map((r) => r.row.measuredAt?.slice(0, 10)).filter((d): d is string => d !== undefined);
  if (dates.length === 0) return "";
  const sorted = [...new Set(dates)].sort();
  return sorted.length === 1 ? sorted[0]! : `${sorted[0]}…${sorted[sorted.length - 1]}`;
}

const STATUS = { met: "met", missed: "**missed**", "no goal": "no row judges it", "no row": "not measured" };

export function renderTable(latest: Latest): string {
  const lines = [
    BEGIN,
    "| issue 15 goal | figures (bench row: value; ✗ = that row missed) | goal | status | measured |",
    "| --- | --- | --- | --- | --- |",
    ...evaluate(latest).map(
      (v) =>
        `| ${cell(v.goal.measure)} | ${cell(figures(v))} | ${cell(v.goal.goal)} | ${STATUS[v.status]} | ${measuredOn(v)} |`,
    ),
    END,
  ];
  return lines.join("\n");
}

/** The README with its table replaced by the one latest.json gives. */
export function withTable(readme: string, latest: Latest): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin === -1 || end === -1 || end < begin)
    throw new Error("README.md has no performance-table markers (begin/end comments)");
  return `${readme.slice(0, begin)}${renderTable(latest)}${readme.slice(end + END.length)}`;
}

/** Rewrites the README's table; true when it changed. */
export function writeReadmeTable(latest: Latest = readLatest(), path = README): boolean {
  const before = readFileSync(path, "utf8");
  const after = withTable(before, latest);
  if (after !== before) writeFileSync(path, after);
  return after !== before;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const changed = writeReadmeTable();
  process.stdout.write(
    changed ? "README.md: performance table rewritten\n" : "README.md: performance table current\n",
  );
}
