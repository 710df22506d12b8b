/**
 * Regular-expression matching under a time limit.
 *
 * Grep runs a pattern the model wrote over files it did not choose. A pattern that backtracks
 * catastrophically (`(a+)+$` on a long run of "a") would spin for minutes on the daemon's only
 * JavaScript thread, freezing every session. Running the match loop as a `vm` script gives it a
 * timeout V8 enforces even inside the regex engine.
 */
import { type Context, createContext, runInContext, Script } from "node:vm";

export class RegexTimeoutError extends Error {
  override readonly name = "RegexTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(
      `The search hit its ${timeoutMs} ms time limit (a pattern that backtracks catastrophically does this); ` +
        "simplify the pattern or narrow the path",
    );
  }
}

const MATCH_LINES = `
globalThis.matchLines = function (text, re) {
  const found = [];
  const lines = text.split("\\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (line.endsWith("\\r")) line = line.slice(0, -1);
    if (re.test(line)) found.push(i);
  }
  return found;
};`;

const CALL = new Script("matchLines(input.text, input.re)");

/** Finds matching lines of many texts, all within one overall time budget. */
export class TimedLineMatcher {
  private readonly context: Context;
  private readonly deadline: number;

  constructor(
    private readonly regex: RegExp,
    private readonly timeoutMs: number,
  ) {
    if (regex.global || regex.sticky)
      throw new Error("TimedLineMatcher needs a regex without the g or y flag");
    this.context = createContext({ input: undefined });
    runInContext(MATCH_LINES, this.context);
    this.deadline = Date.now() + timeoutMs;
  }

  /** Zero-based indexes of the lines of `text` that match; throws `RegexTimeoutError` past the budget. */
  matchingLines(text: string): number[] {
    const remaining = this.deadline - Date.now();
    if (remaining <= 0) throw new RegexTimeoutError(this.timeoutMs);
    this.context.input = { text, re: this.regex };
    try {
      // The array comes from the vm's realm; copy it so callers get an ordinary array.
      return Array.from(
        CALL.runInContext(this.context, { timeout: Math.max(1, Math.floor(remaining)) }) as number[],
      );
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
        throw new RegexTimeoutError(this.timeoutMs);
      }
      throw error;
    } finally {
      this.context.input = undefined;
    }
  }
}
