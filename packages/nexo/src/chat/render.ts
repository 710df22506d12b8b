/**
 * How a turn looks in the terminal: the agent's words stream after `nexo>`, thinking streams dimmed,
 * each tool call is one line with its arguments and one line with how it ended, command output
 * streams as it comes, file changes name their files. Styles come from Node's `util.styleText`
 * and are used only on a colour terminal (not when piped, not with NO_COLOR).
 */
import { styleText } from "node:util";
import type { Item } from "@nexo/wire/schemas/appserver";

type Style = Parameters<typeof styleText>[0];

/** What is being streamed now, so a change of kind starts on a fresh line. */
type Section = "none" | "text" | "thinking" | "output";

/** Longest argument summary shown on a tool line. */
const ARGS_SHOWN = 120;
/** Result lines shown under a tool line. */
const RESULT_LINES_SHOWN = 3;

export function useColor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true;
}

export class TurnRenderer {
  private section: Section = "none";
  private atLineStart = true;
  /** Tool names by call id, so a result line can say which tool it ends. */
  private readonly tools = new Map<string, string>();

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly color: boolean,
  ) {}

  style(format: Style, text: string): string {
    return this.color ? styleText(format, text) : text;
  }

  agentDelta(text: string): void {
    this.enter("text", this.style(["bold", "cyan"], "nexo> "));
    this.write(text);
  }

  reasoningDelta(text: string): void {
    this.enter("thinking", this.style(["dim", "italic"], "thinking: "));
    this.write(this.style(["dim", "italic"], text));
  }

  commandOutput(text: string): void {
    this.enter("output", "");
    this.write(this.style("dim", text));
  }

  itemStarted(item: Item): void {
    if (item.type === "commandExecution") this.line(this.style("yellow", `$ ${item.payload.command}`));
  }

  itemCompleted(item: Item): void {
    switch (item.type) {
      case "toolCall": {
        const { toolName, arguments: args, callId } = item.payload;
        this.tools.set(callId, toolName);
        this.line(`${this.style("yellow", "⏺")} ${this.style("bold", toolName)}(${summarize(args)})`);
        return;
      }
      case "toolResult": {
        const { result, success } = item.payload;
        const lines = result.split("\n").filter((l) => l.trim() !== "");
        const shown = lines.slice(0, RESULT_LINES_SHOWN).map((l) => clip(l, ARGS_SHOWN));
        const more = lines.length > shown.length ? ` … (${lines.length - shown.length} more lines)` : "";
        const head = success ? this.style("green", "  ⎿ ") : this.style("red", "  ⎿ failed: ");
        this.line(`${head}${shown.join("\n    ") || "(no output)"}${more}`);
        return;
      }
      case "commandExecution": {
        const { exitCode, durationMs, status } = item.payload;
        const took = durationMs === undefined ? "" : `, ${Math.round(durationMs)} ms`;
        const ended = exitCode === undefined ? status : `exit ${exitCode}`;
        this.line(this.style(exitCode === 0 ? "dim" : "red", `  (${ended}${took})`));
        return;
      }
      case "fileChange": {
        for (const change of item.payload.changes) {
          this.line(this.style("magenta", `  ${change.kind} ${change.path}`) + this.diffStat(change.diff));
        }
        return;
      }
      case "error":
        this.line(this.style("red", `error: ${item.payload.message}`));
        return;
      case "systemNotice":
        this.line(this.style("dim", `(${item.payload.kind})`));
        return;
      default:
        return;
    }
  }

  /** A line of the chat's own (a notice, an error), on a line of its own. */
  line(text: string): void {
    this.newlineIfNeeded();
    this.out.write(`${text}\n`);
    this.section = "none";
    this.atLineStart = true;
  }

  /** Ends whatever was streaming, so the prompt starts on a fresh line. */
  endTurn(): void {
    this.newlineIfNeeded();
    this.section = "none";
  }

  private diffStat(diff: string): string {
    let added = 0;
    let removed = 0;
    for (const l of diff.split("\n")) {
      if (l.startsWith("+") && !l.startsWith("+++")) added++;
      else if (l.startsWith("-") && !l.startsWith("---")) removed++;
    }
    return this.style("dim", ` (+${added} -${removed})`);
  }

  private enter(section: Section, prefix: string): void {
    if (this.section === section) return;
    this.newlineIfNeeded();
    this.section = section;
    if (prefix !== "") this.write(prefix);
  }

  private write(text: string): void {
    if (text === "") return;
    this.out.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  private newlineIfNeeded(): void {
    if (!this.atLineStart) this.out.write("\n");
    this.atLineStart = true;
  }
}

/** `{"path":"README.md"}` → `path: README.md`, clipped to one line. */
function summarize(args: Record<string, unknown> | undefined): string {
  if (args === undefined) return "";
  const parts = Object.entries(args).map(
    ([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`,
  );
  return clip(parts.join(", ").replace(/\s*\n\s*/g, " ⏎ "), ARGS_SHOWN);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
