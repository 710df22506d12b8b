/**
 * What the scripted child wrote to its report file: one JSON line per event of each spawn (run).
 * The host test passes only when every run the host started played its whole script without a
 * mismatch: the child side is checked as strictly as the host side.
 */
import { existsSync, readFileSync } from "node:fs";

export interface ReportEntry {
  run: number;
  event: "start" | "step" | "done" | "complete" | "mismatch" | "unexpected" | "exit" | string;
  step?: number;
  do?: string;
  problem?: string;
  frame?: unknown;
  [key: string]: unknown;
}

export function readChildReport(path: string): ReportEntry[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as ReportEntry);
}

/** How many times the child was spawned. */
export function runsStarted(entries: readonly ReportEntry[]): number {
  return entries.filter((entry) => entry.event === "start").length;
}

/**
 * Every problem the report shows: a mismatch, a frame after the script, or a run that stopped
 * before its last step. Empty when the child played every run it started to the end.
 */
export function childProblems(entries: readonly ReportEntry[]): string[] {
  const problems: string[] = [];
  const runs = new Set(entries.map((entry) => entry.run));
  if (runs.size === 0) problems.push("the scripted child never started");
  for (const run of runs) {
    const mine = entries.filter((entry) => entry.run === run);
    for (const entry of mine) {
      if (entry.event === "mismatch") problems.push(`run ${run}, step ${entry.step}: ${entry.problem}`);
      if (entry.event === "unexpected") {
        problems.push(`run ${run}: unexpected frame after the script: ${JSON.stringify(entry.frame)}`);
      }
    }
    if (!mine.some((entry) => entry.event === "complete")) {
      const last = mine.filter((entry) => entry.event === "step").at(-1);
      problems.push(
        `run ${run} did not finish its script (last step started: ${last ? `${last.step} ${last.do}` : "none"})`,
      );
    }
  }
  return problems;
}

/** The report as text, for a failure message. */
export function describeReport(entries: readonly ReportEntry[]): string {
  return entries.map((entry) => JSON.stringify(entry).slice(0, 400)).join("\n");
}
