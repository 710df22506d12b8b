/**
 * Issue 15's goals and where bench/results/latest.json answers each: `node --import tsx
 * bench/goals.ts [latest.json] [--strict]` prints every goal with the rows that measure it — value,
 * the row's goal, met, when it was measured and at what load — and names the goals no row answers
 * yet (no row at all, or rows that carry no goal, or a goal other than the issue's). `--strict`
 * exits 1 when any goal is unanswered.
 *
 * The goals live here, not in the benchmarks, because one goal may be answered by several
 * benchmarks (Codex's ready time by the AppServer and the peers benchmark alike) and a benchmark's
 * own goal may differ from the issue's (a looser bound written before the issue): each goal says
 * which rows may answer it and which of their goals count.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

/** A result row as bench/run.ts writes it. */
export interface Row {
  benchmark: string;
  name: string;
  value: number;
  unit: string;
  ratios?: Record<string, number>;
  goal?: { ratio: string; min?: number; max?: number; met: boolean };
  measuredAt?: string;
  loadAverage?: { start: number; end: number };
}

export interface Latest {
  generatedAt?: string;
  results: Row[];
}

export interface Goal {
  id: string;
  /** The issue's words for the measure. */
  measure: string;
  /** The issue's goal. */
  goal: string;
  /** Rows that measure it: a benchmark (any when absent) and the row's name. */
  rows: Array<{ benchmark?: string; name: RegExp }>;
  /** Whether a row's goal is the issue's (same ratio, same bound). */
  accepts(goal: NonNullable<Row["goal"]>): boolean;
  /** The ratio shown as the row's value (else the row's own value and unit). */
  ratio?: string;
}

const says = (text: string) => (g: NonNullable<Row["goal"]>) => g.ratio.includes(text);
const atMost = (max: number, ratio?: string) => (g: NonNullable<Row["goal"]>) =>
  g.max === max && (ratio === undefined || g.ratio.includes(ratio));
const atLeast = (min: number, ratio?: string) => (g: NonNullable<Row["goal"]>) =>
  g.min === min && (ratio === undefined || g.ratio.includes(ratio));

/** Issue 15's table, then its "already ahead, keep it so" list. */
export const GOALS: Goal[] = [
  {
    id: "plugin-vs-mcp",
    measure: "plugin `tool.invoke` / MCP TS SDK tool call over stdio, calls/s (1 and 16 in flight)",
    goal: "≥ 2× at both",
    rows: [{ benchmark: "plugins", name: /^tool\.invoke c=(1|16) nexo$/ }],
    accepts: says("nexo/mcp >= 2"),
    ratio: "nexo/mcp",
  },
  {
    id: "plugin-vs-floor",
    measure: "plugin `tool.invoke` / bare JSON-lines echo floor, 16 in flight",
    goal: "≥ 0.5",
    rows: [{ benchmark: "plugins", name: /^tool\.invoke c=16 nexo$/ }],
    accepts: says("nexo/floor >= 0.5"),
    ratio: "nexo/floor",
  },
  {
    id: "engine-overhead",
    measure: "engine overhead per scripted turn / bare provider calls",
    goal: "≤ 1.1×",
    rows: [{ benchmark: "engine", name: /engine$/ }],
    accepts: atMost(1.1),
    ratio: "engine_time/bare_time",
  },
  {
    id: "ready-vs-codex",
    measure: "`nexo agent --json-stream` (and `nexo app-server`) spawn → ready, / Codex's `codex app-server`",
    goal: "≤ 1.5× Codex",
    rows: [
      { benchmark: "jsonstream", name: /^spawn to ready/ },
      { benchmark: "peers", name: /^spawn to ready.*, nexo/ },
      { benchmark: "appserver", name: /^spawn to initialize response, nexo/ },
    ],
    accepts: atMost(1.5, "codex"),
    ratio: "nexo/codex",
  },
  {
    id: "one-shot-vs-codex",
    measure: "one-shot piped use: spawn → first answer done, and spawn → exit, / Codex's",
    goal: "both ≤ Codex's",
    rows: [
      { benchmark: "jsonstream", name: /^spawn to .*(answer|exit).*nexo/ },
      { benchmark: "peers", name: /^one-shot: spawn to (answer complete|exit), nexo/ },
    ],
    accepts: atMost(1, "codex"),
    ratio: "nexo/codex",
  },
  {
    id: "done-to-exit",
    measure: "one-shot piped use: answer done → exit",
    goal: "≤ 20 ms",
    rows: [
      { benchmark: "jsonstream", name: /to exit, nexo/ },
      { benchmark: "peers", name: /^one-shot: answer complete to exit, nexo \(bound\)$/ },
    ],
    accepts: atMost(20, "ms"),
  },
  {
    id: "openai-vs-anthropic-rate",
    measure: "OpenAI-format provider streaming, events/s / Anthropic-format",
    goal: "≥ 0.9×",
    rows: [{ name: /openai/i }],
    accepts: atLeast(0.9),
  },
  {
    id: "openai-first-delta",
    measure: "OpenAI-format provider: first delta / Anthropic-format's",
    goal: "≤ 1.2×",
    rows: [{ name: /first delta/i }],
    accepts: atMost(1.2),
  },
  {
    id: "long-answer",
    measure: "long answer through json-stream / the same SSE read directly",
    goal: "≥ 0.8×",
    rows: [{ benchmark: "jsonstream", name: /^long answer through/ }],
    accepts: atLeast(0.8),
    ratio: "nexo/direct",
  },
  {
    id: "sessions-1000",
    measure: "1,000 concurrent sessions through the daemon",
    goal: "all answered ≤ 1.5 s, 0 errors",
    rows: [{ benchmark: "daemon", name: /^1000 concurrent sessions/ }],
    accepts: (g) => g.max === 1.5 || /1\.5 ?s/.test(g.ratio),
  },
  {
    id: "idle-rss",
    measure: "idle daemon RSS with the quickstart plugins",
    goal: "≤ 60 MB",
    rows: [{ benchmark: "daemon", name: /^idle RSS/ }],
    accepts: atMost(60),
  },
  {
    id: "peer-vs-vscode-small",
    measure: "JSON-RPC peer / vscode-jsonrpc, round trips/s, up to 4 KiB",
    goal: "≥ 1.5×",
    rows: [{ benchmark: "wire", name: /^roundtrip (small|4KiB) c=\d+ nexo$/ }],
    accepts: says("nexo/vscode >= 1.5"),
    ratio: "nexo/vscode",
  },
  {
    id: "peer-vs-vscode-64k",
    measure: "JSON-RPC peer / vscode-jsonrpc, round trips/s, 64 KiB",
    goal: "≥ 1.0×",
    rows: [{ benchmark: "wire", name: /^roundtrip 64KiB( text)? c=\d+ nexo$/ }],
    accepts: (g) => /nexo\/vscode >= 1(\.0)?$/.test(g.ratio) || g.ratio.includes("nexo/vscode >= 1 "),
    ratio: "nexo/vscode",
  },
  {
    id: "keep-conversation",
    measure: "keep ahead: 20-turn file-reading conversation, wall time / Claude Code's and Codex's",
    goal: "≤ 0.5× (was 0.27× and 0.06×)",
    rows: [
      { benchmark: "peers", name: /^20-turn conversation.*, nexo/ },
      { benchmark: "appserver", name: /^20-turn conversation.*, nexo/ },
    ],
    accepts: atMost(0.5),
  },
  {
    id: "keep-streaming",
    measure: "keep ahead: 5,000-delta answer, events/s / Claude Code's and Codex's",
    goal: "≥ 1×",
    rows: [
      { benchmark: "peers", name: /^5000-delta answer, nexo/ },
      { benchmark: "appserver", name: /^5000-delta answer over .*, nexo/ },
    ],
    accepts: atLeast(1),
  },
  {
    id: "keep-rss",
    measure: "keep ahead: peak RSS / Claude Code's and Codex's",
    goal: "≤ 1×",
    rows: [
      { benchmark: "peers", name: /^peak RSS .*, nexo/ },
      { benchmark: "appserver", name: /^peak RSS after the 20-turn conversation, nexo/ },
    ],
    accepts: atMost(1),
  },
  {
    id: "keep-openclaw",
    measure: "keep ahead: daemon vs OpenClaw's gateway — ready, idle RSS, turn",
    goal: "≤ 1× (was 0.08×, 0.18×, 0.04×)",
    rows: [{ name: /openclaw/i }],
    accepts: atMost(1),
  },
];

export type Status = "met" | "missed" | "no goal" | "no row";

export interface RowVerdict {
  row: Row;
  /** The row's goal when it is the issue's; else undefined (the row measures, but does not judge). */
  goal: NonNullable<Row["goal"]> | undefined;
  shown: string;
}

export interface Verdict {
  goal: Goal;
  status: Status;
  rows: RowVerdict[];
}

const matches = (goal: Goal, row: Row) =>
  goal.rows.some(
    (r) => (r.benchmark === undefined || r.benchmark === row.benchmark) && r.name.test(row.name),
  );

function shown(goal: Goal, row: Row): string {
  const value = `${row.value} ${row.unit}`;
  const ratio = goal.ratio === undefined ? undefined : row.ratios?.[goal.ratio];
  if (ratio !== undefined) return `${goal.ratio} = ${ratio} (${value})`;
  // No single ratio named: every nexo/<peer> ratio the row has.
  const against = Object.entries(row.ratios ?? {}).filter(([k]) => k.startsWith("nexo/"));
  return against.length === 0 ? value : `${against.map(([k, v]) => `${k} = ${v}`).join(", ")} (${value})`;
}

/**
 * A goal is met when every row carrying the issue's goal met it, missed when one did not; rows
 * that measure it without that goal are listed but do not decide.
 */
export function evaluate(latest: Latest, goals: Goal[] = GOALS): Verdict[] {
  return goals.map((goal) => {
    const rows = latest.results
      .filter((row) => matches(goal, row))
      .map((row) => ({
        row,
        goal: row.goal && goal.accepts(row.goal) ? row.goal : undefined,
        shown: shown(goal, row),
      }));
    const judged = rows.filter((r) => r.goal !== undefined);
    const status: Status =
      rows.length === 0
        ? "no row"
        : judged.length === 0
          ? "no goal"
          : judged.every((r) => r.goal!.met)
            ? "met"
            : "missed";
    return { goal, status, rows };
  });
}

export function describeGoal(g: NonNullable<Row["goal"]>): string {
  // Some rows spell their bounds out in the ratio's text ("nexo/mcp >= 2 and nexo/floor >= 0.5").
  if (/[<>]=/.test(g.ratio)) return g.ratio;
  const bounds = [g.min === undefined ? "" : ` >= ${g.min}`, g.max === undefined ? "" : ` <= ${g.max}`].join(
    "",
  );
  return `${g.ratio}${bounds}`;
}

/** The checker's report, one block per goal. */
export function report(verdicts: Verdict[]): string {
  const out: string[] = [];
  for (const v of verdicts) {
    out.push(`[${v.status}] ${v.goal.id}: ${v.goal.measure} — goal ${v.goal.goal}`);
    for (const r of v.rows) {
      const when = r.row.measuredAt ?? "unknown";
      const load = r.row.loadAverage ? `, load ${r.row.loadAverage.start}–${r.row.loadAverage.end}` : "";
      const judged = r.goal
        ? `${describeGoal(r.goal)}: ${r.goal.met ? "met" : "MISSED"}`
        : r.row.goal
          ? `its goal (${describeGoal(r.row.goal)}) is not the issue's`
          : "no goal/met on the row";
      out.push(`    ${r.row.benchmark} | ${r.row.name} | ${r.shown} | ${judged} | measured ${when}${load}`);
    }
  }
  const count = (s: Status) => verdicts.filter((v) => v.status === s);
  const unanswered = [...count("no row"), ...count("no goal")].map((v) => v.goal.id);
  out.push(
    `${verdicts.length} goals: ${count("met").length} met, ${count("missed").length} missed, ${unanswered.length} unanswered${unanswered.length > 0 ? ` (${unanswered.join(", ")})` : ""}`,
  );
  return `${out.join("\n")}\n`;
}

export const LATEST = fileURLToPath(new URL("./results/latest.json", import.meta.url));

export function readLatest(path = LATEST): Latest {
  return JSON.parse(readFileSync(path, "utf8")) as Latest;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const path = args.find((a) => !a.startsWith("--")) ?? LATEST;
  const verdicts = evaluate(readLatest(path));
  process.stdout.write(report(verdicts));
  if (args.includes("--strict") && verdicts.some((v) => v.status === "no row" || v.status === "no goal"))
    process.exitCode = 1;
}
