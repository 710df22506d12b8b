/**
 * Reads a tool's arguments and collects every problem before failing, so one -33402 reply names
 * all the offending fields at once.
 *
 * The daemon already validates arguments against each tool's `input_schema` before it calls
 * `tool.invoke`, but a plugin cannot rely on that: `nexo plugin call`, another host or a test may
 * call it directly. The `details` are shaped like the host's own (`[{path, message}]`, `path`
 * a JSON pointer), so the model sees one format whoever caught the mistake.
 */
import { ToolArgumentInvalidError } from "nexo-plugin-sdk";

export interface ArgumentProblem {
  /** JSON pointer of the offending field, `""` for the arguments as a whole. */
  path: string;
  message: string;
}

export class ArgumentReader {
  private readonly problems: ArgumentProblem[] = [];
  private readonly values: Record<string, unknown>;
  /** When the arguments are not an object, that is the one problem worth reporting. */
  private readonly unusable: boolean = false;

  /**
   * `raw` is `tool.invoke`'s `args`: absent (null) reads as `{}`; anything but an object is a
   * problem. Keys outside `allowed` are problems too, as the schemas set `additionalProperties`.
   */
  constructor(
    private readonly toolName: string,
    raw: unknown,
    allowed: readonly string[],
  ) {
    if (raw === null || raw === undefined) {
      this.values = {};
    } else if (typeof raw !== "object" || Array.isArray(raw)) {
      this.values = {};
      this.problems.push({ path: "", message: "the arguments must be a JSON object" });
      this.unusable = true;
    } else {
      this.values = raw as Record<string, unknown>;
      for (const key of Object.keys(this.values)) {
        if (!allowed.includes(key)) {
          this.problems.push({
            path: pointer(key),
            message: `is not an argument of ${toolName} (expected ${allowed.join(", ")})`,
          });
        }
      }
    }
  }

  /** A string, trimmed; `fallback` when absent, a problem when required and absent. */
  string(field: string, options: { fallback?: string; maxLength: number }): string {
    const value = this.values[field];
    if (value === undefined) {
      if (options.fallback !== undefined) return options.fallback;
      return this.fail(field, "is required", "");
    }
    if (typeof value !== "string") return this.fail(field, "must be a string", "");
    const trimmed = value.trim();
    if (trimmed === "") return this.fail(field, "must not be empty", "");
    if (trimmed.length > options.maxLength) {
      return this.fail(field, `must be at most ${options.maxLength} characters`, "");
    }
    return trimmed;
  }

  /** An optional string: `undefined` when absent. */
  optionalString(field: string, options: { maxLength: number }): string | undefined {
    if (this.values[field] === undefined) return undefined;
    return this.string(field, options);
  }

  /** An integer in `[min, max]`; `fallback` when absent (required when there is none). */
  integer(field: string, options: { min: number; max: number; fallback?: number }): number {
    const value = this.values[field];
    if (value === undefined) {
      if (options.fallback !== undefined) return options.fallback;
      return this.fail(field, "is required", options.min);
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < options.min || value > options.max) {
      return this.fail(field, `must be an integer from ${options.min} to ${options.max}`, options.min);
    }
    return value;
  }

  /** An optional integer in `[min, max]`: `undefined` when absent. */
  optionalInteger(field: string, options: { min: number; max: number }): number | undefined {
    if (this.values[field] === undefined) return undefined;
    return this.integer(field, options);
  }

  /** One of `choices`; `fallback` when absent. */
  choice<T extends string>(field: string, choices: readonly T[], fallback: T): T {
    const value = this.values[field];
    if (value === undefined) return fallback;
    if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
      return this.fail(field, `must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}`, fallback);
    }
    return value as T;
  }

  /** Records a problem found after reading (a value the tool itself refuses). */
  problem(field: string, message: string): void {
    if (!this.unusable) this.problems.push({ path: pointer(field), message });
  }

  /** Throws ToolArgumentInvalidError (-33402) listing every problem, if there was any. */
  finish(): void {
    if (this.problems.length === 0) return;
    const summary = this.problems.map((p) => `${p.path || "(arguments)"} ${p.message}`).join("; ");
    throw new ToolArgumentInvalidError(`${this.toolName}: ${summary}`, this.problems);
  }

  /** Records the problem and returns a placeholder, so reading goes on and finds the rest. */
  private fail<T>(field: string, message: string, placeholder: T): T {
    this.problem(field, message);
    return placeholder;
  }
}

/** RFC 6901: `~` and `/` are escaped inside a pointer segment. */
function pointer(field: string): string {
  return `/${field.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}
