/**
 * `Edit`: replaces an exact string in a file and answers with the unified diff of the change.
 *
 * The string must occur exactly once unless `replace_all` is set: an ambiguous match is refused
 * rather than guessed, so the model adds context until it names one place.
 */
import { writeFileAtomicIn } from "../../config/atomic-write.js";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { displayPath, isInside, locateInWorkspace, readLocatedFile } from "./confine.js";
import { looksBinary } from "./file-kind.js";
import { errorOutput, fileErrorOutput, stringArg } from "./tool-output.js";

export interface EditToolOptions {
  /** Larger files are refused. Default 10 MiB. */
  readonly maxFileBytes?: number;
}

interface EditArgs {
  file_path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export function createEditTool(options: EditToolOptions = {}): Tool {
  const maxFileBytes = options.maxFileBytes ?? 10 * 1024 * 1024;
  return {
    name: "Edit",
    description:
      "Replace text in an existing file. `old_string` must match the file exactly (including " +
      "whitespace) and occur exactly once, unless `replace_all` is true. Returns the unified diff.",
    inputSchema: {
      type: "object",
      properties: {
        file_path: { type: "string", minLength: 1, description: "The file to edit" },
        old_string: { type: "string", minLength: 1, description: "The exact text to replace" },
        new_string: { type: "string", description: "The replacement text" },
        replace_all: { type: "boolean", description: "Replace every occurrence (default false)" },
      },
      required: ["file_path", "old_string", "new_string"],
      additionalProperties: false,
    },
    category: "edit",
    source: "builtin",
    describe: (args) => `Edit ${stringArg(args, "file_path") ?? "a file"}`,
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as EditArgs;
      try {
        return await editFile(args, ctx, maxFileBytes);
      } catch (error) {
        const output = fileErrorOutput(error, args.file_path, ctx);
        if (output === undefined) throw error;
        return output;
      }
    },
  };
}

async function editFile(args: EditArgs, ctx: ToolContext, maxFileBytes: number): Promise<ToolOutput> {
  const location = await locateInWorkspace(ctx.workspace, args.file_path, { unconfined: ctx.unconfined });
  try {
    const { path, workspace } = location;
    const shown = displayPath(workspace, path);
    if (location.name === undefined || location.stats?.isFile() !== true)
      return errorOutput(`${shown} is not a regular file`);
    if (location.stats.size > maxFileBytes)
      return errorOutput(`${shown} is ${location.stats.size} bytes, over Edit's limit of ${maxFileBytes}`);
    const bytes = await readLocatedFile(location, args.file_path, maxFileBytes);
    if (bytes === undefined) return errorOutput(`${shown} is over Edit's limit of ${maxFileBytes} bytes`);
    if (looksBinary(bytes)) return errorOutput(`${shown} is a binary file; Edit changes text files only`);
    const before = bytes.toString("utf8");

    if (args.old_string === args.new_string)
      return errorOutput("old_string and new_string are identical; nothing to change");
    const count = countOccurrences(before, args.old_string);
    if (count === 0) return errorOutput(`old_string was not found in ${shown}`);
    if (count > 1 && args.replace_all !== true) {
      return errorOutput(
        `old_string occurs ${count} times in ${shown}; include more surrounding text to pick one, or set replace_all`,
      );
    }
    // split/join, not String.replace: the replacement must be literal ("$&" stays "$&").
    const after =
      args.replace_all === true
        ? before.split(args.old_string).join(args.new_string)
        : replaceOnce(before, args.old_string, args.new_string);
    // Written back into the directory the file was read from, whatever was renamed since.
    await writeFileAtomicIn(location.dir.self(), location.name, after);

    const inside = isInside(workspace, path);
    const diff = await unifiedDiff(inside ? shown : path, inside, before, after);
    return {
      output: diff,
      outputType: "diff",
      detail: { kind: "file_change", path, change: "modified", diff },
      metadata: { file_path: path, replacements: count },
    };
  } finally {
    await location.release();
  }
}

/**
 * The change as a unified diff with `a/` and `b/` prefixes (git's convention) for workspace
 * files; a file outside the workspace (unconfined mode) is named by its absolute path. The diff
 * library (115 KB) loads with the first change made, off the start-up path of `nexo agent`.
 */
export async function unifiedDiff(
  name: string,
  relative: boolean,
  before: string,
  after: string,
): Promise<string> {
  const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import("diff");
  const oldName = relative ? `a/${name}` : name;
  const newName = relative ? `b/${name}` : name;
  return createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length))
    count++;
  return count;
}

function replaceOnce(text: string, needle: string, replacement: string): string {
  const index = text.indexOf(needle);
  return text.slice(0, index) + replacement + text.slice(index + needle.length);
}
