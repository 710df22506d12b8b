/**
 * `Write`: creates or replaces a whole file, atomically (temp file + rename), creating missing
 * parent directories. Its result tells doors what changed: `detail` is the file change, with the
 * unified diff (from nothing for a new file) when both versions are text of a reasonable size
 * (`metadata.diff` repeats it for older readers).
 */
import { writeFileAtomicIn } from "../../config/atomic-write.js";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import {
  type ConfinedLocation,
  displayPath,
  isInside,
  locateInWorkspace,
  readLocatedFile,
} from "./confine.js";
import { unifiedDiff } from "./edit.js";
import { looksBinary } from "./file-kind.js";
import { createMissingDirs } from "./locate.js";
import { errorOutput, fileErrorOutput, stringArg } from "./tool-output.js";

interface WriteArgs {
  file_path: string;
  content: string;
}

/** Mode of a newly created file: what a shell with the usual umask 022 would give. */
const NEW_FILE_MODE = 0o644;

/** Files (before or after) beyond this size get no diff in the result: it would dwarf the answer. */
const MAX_DIFF_SOURCE_BYTES = 1024 * 1024;

export function createWriteTool(): Tool {
  return {
    name: "Write",
    description:
      "Write a file in the workspace, replacing it entirely if it exists and creating missing parent " +
      "directories. Prefer Edit to change part of an existing file.",
    inputSchema: {
      type: "object",
      properties: {
        file_path: { type: "string", minLength: 1, description: "The file to write" },
        content: { type: "string", description: "The complete new content of the file" },
      },
      required: ["file_path", "content"],
      additionalProperties: false,
    },
    category: "edit",
    source: "builtin",
    describe: (args) => `Write to ${stringArg(args, "file_path") ?? "a file"}`,
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as WriteArgs;
      try {
        return await writeWholeFile(args, ctx);
      } catch (error) {
        const output = fileErrorOutput(error, args.file_path, ctx);
        if (output === undefined) throw error;
        return output;
      }
    },
  };
}

async function writeWholeFile(args: WriteArgs, ctx: ToolContext): Promise<ToolOutput> {
  const location = await locateInWorkspace(ctx.workspace, args.file_path, {
    unconfined: ctx.unconfined,
    forWrite: true,
  });
  try {
    const shown = displayPath(location.workspace, location.path);
    const existing = location.stats;
    if (location.name === undefined || existing?.isDirectory() === true)
      return errorOutput(`${shown} is a directory`);
    if (existing !== undefined && !existing.isFile()) return errorOutput(`${shown} is not a regular file`);
    const before = existing === undefined ? "" : await diffableText(location, args.file_path);
    // Missing parents are created and the file is replaced inside the directory the check was made on.
    const dir = await createMissingDirs(location);
    try {
      await writeFileAtomicIn(dir.self(), location.name, args.content, { mode: NEW_FILE_MODE });
    } finally {
      if (dir !== location.dir) await dir.close();
    }
    const bytes = Buffer.byteLength(args.content, "utf8");
    const inside = isInside(location.workspace, location.path);
    const diff =
      before !== undefined && bytes <= MAX_DIFF_SOURCE_BYTES
        ? await unifiedDiff(inside ? shown : location.path, inside, before, args.content)
        : undefined;
    return {
      output: `${existing === undefined ? "Created" : "Overwrote"} ${shown} (${bytes} bytes)`,
      detail: {
        kind: "file_change",
        path: location.path,
        change: existing === undefined ? "created" : "modified",
        ...(diff === undefined ? {} : { diff }),
      },
      metadata: {
        file_path: location.path,
        bytes,
        created: existing === undefined,
        ...(diff === undefined ? {} : { diff }),
      },
    };
  } finally {
    await location.release();
  }
}

/** The file's text before the write, or undefined when it is binary or too big to diff. */
async function diffableText(location: ConfinedLocation, filePath: string): Promise<string | undefined> {
  const bytes = await readLocatedFile(location, filePath, MAX_DIFF_SOURCE_BYTES).catch(() => undefined);
  if (bytes === undefined || looksBinary(bytes)) return undefined;
  return bytes.toString("utf8");
}
