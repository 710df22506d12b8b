/**
 * What a file tool call did, as a `fileChange` entry with its unified diff: `Edit` returns the diff
 * as its output; `Write` reports it in its result's metadata (`diff`, and `created` for a new file).
 */
import type { FileChangeEntry } from "@nexo/wire/schemas/appserver";

/** The tools whose calls are shown as file changes. */
export const FILE_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit"]);

function pathArg(input: Record<string, unknown>): string | undefined {
  const path = input.file_path;
  return typeof path === "string" && path !== "" ? path : undefined;
}

/** An Edit call's change, read from its result text (the diff). */
export function fileChangeOfEdit(
  tool: string,
  input: Record<string, unknown>,
  result: string,
): FileChangeEntry | undefined {
  const path = pathArg(input);
  if (tool !== "Edit" || path === undefined || !result.startsWith("---")) return undefined;
  return { path, kind: "update", diff: result };
}

/** The change a finished Write or Edit call made, from its result. */
export function fileChangeOfResult(
  tool: string,
  input: Record<string, unknown>,
  result: { output: string; outputType: string; metadata?: Record<string, unknown> },
): FileChangeEntry | undefined {
  const path = pathArg(input);
  if (path === undefined) return undefined;
  if (tool === "Edit" && result.outputType === "diff") return { path, kind: "update", diff: result.output };
  if (tool === "Write" && typeof result.metadata?.diff === "string") {
    return { path, kind: result.metadata.created === true ? "add" : "update", diff: result.metadata.diff };
  }
  return undefined;
}

/** The change a file tool call is about to make, before it ran (the diff is not known yet). */
export function plannedFileChange(tool: string, input: Record<string, unknown>): FileChangeEntry | undefined {
  const path = pathArg(input);
  if (!FILE_TOOLS.has(tool) || path === undefined) return undefined;
  return { path, kind: "update", diff: "" };
}
