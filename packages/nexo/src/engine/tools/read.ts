/**
 * `Read`: a text file with line numbers (like `cat -n`), or an image as base64.
 */
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { displayPath, locateInWorkspace, openLocatedFile, readWhole } from "./confine.js";
import { looksBinary, SNIFF_BYTES, sniffImage } from "./file-kind.js";
import { errorOutput, fileErrorOutput, stringArg } from "./tool-output.js";

export interface ReadToolOptions {
  /** Lines shown when the call gives no `limit`. Default 2000. */
  readonly defaultLineLimit?: number;
  /** Longer lines are cut (with a marker). Default 2000 characters. */
  readonly maxLineChars?: number;
  /** Larger text files are refused. Default 10 MiB. */
  readonly maxTextBytes?: number;
  /** Larger images are refused. Default 5 MiB (the common provider limit for one image). */
  readonly maxImageBytes?: number;
}

interface ReadArgs {
  file_path: string;
  offset?: number;
  limit?: number;
}

const MIB = 1024 * 1024;

export function createReadTool(options: ReadToolOptions = {}): Tool {
  const limits = {
    defaultLineLimit: options.defaultLineLimit ?? 2000,
    maxLineChars: options.maxLineChars ?? 2000,
    maxTextBytes: options.maxTextBytes ?? 10 * MIB,
    maxImageBytes: options.maxImageBytes ?? 5 * MIB,
  };
  return {
    name: "Read",
    description:
      "Read a file from the workspace. Text comes back with line numbers (like `cat -n`); use `offset` " +
      `(1-based line) and \`limit\` (lines, default ${limits.defaultLineLimit}) for long files. PNG, JPEG, ` +
      "GIF and WebP images come back as images. Other binary files are refused. Paths are relative " +
      "to the workspace or absolute.",
    inputSchema: {
      type: "object",
      properties: {
        file_path: { type: "string", minLength: 1, description: "The file to read" },
        offset: { type: "integer", minimum: 1, description: "First line to show (1-based)" },
        limit: { type: "integer", minimum: 1, description: "How many lines to show" },
      },
      required: ["file_path"],
      additionalProperties: false,
    },
    category: "info",
    source: "builtin",
    describe(args) {
      const path = stringArg(args, "file_path") ?? "a file";
      const offset = typeof args.offset === "number" ? args.offset : undefined;
      const limit = typeof args.limit === "number" ? args.limit : undefined;
      if (offset === undefined && limit === undefined) return `Read ${path}`;
      const first = offset ?? 1;
      return limit === undefined
        ? `Read ${path} (from line ${first})`
        : `Read ${path} (lines ${first}-${first + limit - 1})`;
    },
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as ReadArgs;
      try {
        return await readFileForModel(args, ctx, limits);
      } catch (error) {
        const output = fileErrorOutput(error, args.file_path, ctx);
        if (output === undefined) throw error;
        return output;
      }
    },
  };
}

async function readFileForModel(
  args: ReadArgs,
  ctx: ToolContext,
  limits: Required<ReadToolOptions>,
): Promise<ToolOutput> {
  const location = await locateInWorkspace(ctx.workspace, args.file_path, {
    unconfined: ctx.unconfined,
    ...(ctx.readableFiles ? { alsoReadable: ctx.readableFiles } : {}),
  });
  try {
    const path = location.path;
    const shown = displayPath(location.workspace, path);
    // The kind is known before opening: opening a FIFO or a device could block or act.
    if (location.name === undefined || location.stats?.isDirectory() === true)
      return errorOutput(`${shown} is a directory; use Glob to list its files`);
    if (location.stats?.isFile() !== true) return errorOutput(`${shown} is not a regular file`);
    const { handle, stats } = await openLocatedFile(location, args.file_path);
    try {
      const head = Buffer.alloc(Math.min(SNIFF_BYTES, stats.size));
      await handle.read(head, 0, head.length, 0);

      const mediaType = sniffImage(head);
      if (mediaType !== undefined) {
        if (stats.size > limits.maxImageBytes) {
          return errorOutput(
            `${shown} is an image of ${stats.size} bytes; Read accepts images up to ${limits.maxImageBytes} bytes`,
          );
        }
        const data = await readWhole(handle, stats.size);
        return {
          output: data.toString("base64"),
          outputType: "image",
          metadata: { file_path: path, media_type: mediaType, bytes: data.length },
        };
      }
      if (looksBinary(head)) {
        return errorOutput(
          `${shown} is a binary file (${stats.size} bytes); Read shows text files and images only`,
        );
      }
      if (stats.size > limits.maxTextBytes) {
        return errorOutput(
          `${shown} is ${stats.size} bytes, over Read's limit of ${limits.maxTextBytes}; search it with Grep instead`,
        );
      }
      const text = (await readWhole(handle, stats.size)).toString("utf8");
      return numberedLines(text, shown, path, args, limits);
    } finally {
      await handle.close();
    }
  } finally {
    await location.release();
  }
}

function numberedLines(
  text: string,
  shown: string,
  path: string,
  args: ReadArgs,
  limits: Required<ReadToolOptions>,
): ToolOutput {
  const lines = text.split(/\r?\n/);
  // A final newline ends the last line; it does not start another one.
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length === 0)
    return { output: `(${shown} is empty)`, metadata: { file_path: path, total_lines: 0 } };

  const first = args.offset ?? 1;
  if (first > lines.length) {
    return errorOutput(`offset ${first} is past the end of ${shown}, which has ${lines.length} lines`);
  }
  const last = Math.min(lines.length, first - 1 + (args.limit ?? limits.defaultLineLimit));
  const rendered: string[] = [];
  for (let number = first; number <= last; number++) {
    let line = lines[number - 1]!;
    if (line.length > limits.maxLineChars) {
      line = `${line.slice(0, limits.maxLineChars)} … [line cut: ${line.length} characters]`;
    }
    rendered.push(`${String(number).padStart(6)}\t${line}`);
  }
  if (first > 1 || last < lines.length) {
    const more = last < lines.length ? `; continue with offset ${last + 1}` : "";
    rendered.push(`(lines ${first}-${last} of ${lines.length}${more})`);
  }
  return {
    output: rendered.join("\n"),
    metadata: { file_path: path, first_line: first, last_line: last, total_lines: lines.length },
  };
}
