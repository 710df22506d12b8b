/**
 * What a file tool call did, as a `fileChange` entry with its unified diff: a live turn reads it from
 * the call's typed result (`detail`, for Write and Edit alike); a stored one from Edit's output, which
 * is the diff.
 */
import type { FileChangeEntry } from "@nexo/wire/schemas/appserver";
import type { ToolResultDetail } from "../../../engine/types.js";

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

/** The change a finished file tool call made, from its typed result (Write and Edit both report it). */
export function fileChangeOfResult(
  input: Record<string, unknown>,
  result: { detail?: ToolResultDetail },
): FileChangeEntry | undefined {
  const path = pathArg(input);
  const detail = result.detail;
  if (path === undefined || detail?.kind !== "file_change" || detail.diff === undefined) return undefined;
  return { path, kind: detail.change === "created" ? "add" : "update", diff: detail.diff };
}

/** The change a file tool call is about to make, before it ran (the diff is not known yet). */
export function plannedFileChange(tool: string, input: Record<string, unknown>): FileChangeEntry | undefined {
  const path = pathArg(input);
  if (!FILE_TOOLS.has(tool) || path === undefined) return undefined;
  return { path, kind: "update", diff: "" };
}
