/**
 * Typed errors of the tool registry. Registration errors are the integrator's mistakes (thrown);
 * argument and lookup errors are the model's (turned into error outputs by `invoke`).
 */
import type { Tool } from "../types.js";

/** A second tool tried to take a name that is already registered. */
export class DuplicateToolError extends Error {
  override readonly name = "DuplicateToolError";
  readonly code = "duplicate_tool";
  constructor(
    readonly toolName: string,
    readonly existingSource: Tool["source"],
    readonly newSource: Tool["source"],
  ) {
    super(
      `Tool name "${toolName}" is already registered (source: ${existingSource}); ` +
        `a ${newSource} tool cannot register the same name`,
    );
  }
}

/** A tool cannot be registered: bad name, or an input schema that is not a valid object schema. */
export class InvalidToolError extends Error {
  override readonly name = "InvalidToolError";
  readonly code = "invalid_tool";
  constructor(
    readonly toolName: string,
    readonly source: Tool["source"],
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`Cannot register ${source} tool "${toolName}": ${reason}`, options);
  }
}

/** One argument that failed validation. `path` is a JSON pointer into the arguments ("" = the whole object). */
export interface ToolArgumentIssue {
  path: string;
  message: string;
}

/** The issues as one line, `path message` joined by `; ` (the JSON-schema validator's wording). */
export function describeArgumentIssues(issues: readonly ToolArgumentIssue[]): string {
  return issues
    .map((issue) => `${issue.path === "" ? "(arguments)" : issue.path} ${issue.message}`)
    .join("; ");
}

/** A call's arguments do not match the tool's input schema. */
export class ToolArgumentsError extends Error {
  override readonly name = "ToolArgumentsError";
  readonly code = "invalid_arguments";
  constructor(
    readonly toolName: string,
    readonly issues: readonly ToolArgumentIssue[],
  ) {
    super(`Invalid arguments for ${toolName}: ${describeArgumentIssues(issues)}`);
  }
}

/** The model called a tool that is not registered. */
export class UnknownToolError extends Error {
  override readonly name = "UnknownToolError";
  readonly code = "unknown_tool";
  constructor(
    readonly toolName: string,
    readonly suggestions: readonly string[],
  ) {
    const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(", ")}?` : "";
    super(`Tool "${toolName}" does not exist.${hint}`);
  }
}
