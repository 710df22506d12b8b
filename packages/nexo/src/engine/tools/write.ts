/**
 * `Write`: creates or replaces a whole file, atomically (temp file + rename), creating missing
 * parent directories.
 */
import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../config/index.js";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { displayPath, realWorkspace, resolveInWorkspace } from "./confine.js";
import { errorOutput, fileErrorOutput, stringArg } from "./tool-output.js";

interface WriteArgs {
  file_path: string;
  content: string;
}

/** Mode of a newly created file: what a shell with the usual umask 022 would give. */
const NEW_FILE_MODE = 0o644;

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
        const output = fileErrorOutput(error, args.file_path);
        if (output === undefined) throw error;
        return output;
      }
    },
  };
}

async function writeWholeFile(args: WriteArgs, ctx: ToolContext): Promise<ToolOutput> {
  const path = await resolveInWorkspace(ctx.workspace, args.file_path, {
    unconfined: ctx.unconfined,
    forWrite: true,
  });
  const shown = displayPath(await realWorkspace(ctx.workspace), path);
  const existing = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (existing?.isDirectory() === true) return errorOutput(`${shown} is a directory`);
  if (existing !== undefined && !existing.isFile()) return errorOutput(`${shown} is not a regular file`);
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, args.content, { mode: NEW_FILE_MODE });
  const bytes = Buffer.byteLength(args.content, "utf8");
  return {
    output: `${existing === undefined ? "Created" : "Overwrote"} ${shown} (${bytes} bytes)`,
    metadata: { file_path: path, bytes, created: existing === undefined },
  };
}
