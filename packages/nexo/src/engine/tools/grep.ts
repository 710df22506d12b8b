/**
 * `Grep`: searches file contents with a JavaScript regular expression, line by line.
 */
import { basename } from "node:path";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import {
  type ConfinedLocation,
  displayPath,
  locateInWorkspace,
  openLocatedDir,
  readLocatedFile,
} from "./confine.js";
import { looksBinary } from "./file-kind.js";
import { GlobPatternError, globToRegExp } from "./glob-pattern.js";
import { LineSearch, type MatchedLines, RegexTimeoutError } from "./line-matcher.js";
import { SearchesBusyError } from "./match-workers.js";
import { errorOutput, fileErrorOutput, oneLine, stringArg } from "./tool-output.js";
import { DEFAULT_SKIP_DIRS, type WalkEntry, walkedFile, walkFiles } from "./walk.js";

export interface GrepToolOptions {
  /** Files (mode "files") or matching lines (mode "content") listed at most. Default 200. */
  readonly maxResults?: number;
  /** Larger files are skipped. Default 5 MiB. */
  readonly maxFileBytes?: number;
  /** Matching lines are cut to this many characters. Default 300. */
  readonly maxLineChars?: number;
  /** Time limit for one search. Default 30 000 ms. */
  readonly timeoutMs?: number;
  /** Directory names not descended into. Default node_modules and .git. */
  readonly skipDirs?: readonly string[];
  /** Directory entries examined at most per call. Default 200 000. */
  readonly maxEntries?: number;
}

type OutputMode = "files" | "content";

interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  case_insensitive?: boolean;
  output_mode?: OutputMode;
}

interface Limits {
  maxResults: number;
  maxFileBytes: number;
  maxLineChars: number;
  timeoutMs: number;
  skipDirs: readonly string[];
  maxEntries: number | undefined;
}

export function createGrepTool(options: GrepToolOptions = {}): Tool {
  const limits: Limits = {
    maxResults: options.maxResults ?? 200,
    maxFileBytes: options.maxFileBytes ?? 5 * 1024 * 1024,
    maxLineChars: options.maxLineChars ?? 300,
    timeoutMs: options.timeoutMs ?? 30_000,
    skipDirs: options.skipDirs ?? DEFAULT_SKIP_DIRS,
    maxEntries: options.maxEntries,
  };
  return {
    name: "Grep",
    description:
      "Search file contents with a JavaScript regular expression, line by line. `path` is a file or " +
      'directory (default: the workspace); `glob` filters files ("*.ts" matches names, "src/**/*.ts" ' +
      'paths). output_mode "files" (default) lists matching files; "content" shows path:line:text. ' +
      `Binary files, files over ${limits.maxFileBytes} bytes and ${limits.skipDirs.join("/")} are skipped; ` +
      `at most ${limits.maxResults} results.`,
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", minLength: 1, description: "JavaScript regular expression" },
        path: {
          type: "string",
          minLength: 1,
          description: "File or directory to search (default: the workspace)",
        },
        glob: {
          type: "string",
          minLength: 1,
          description: 'Only search files matching this glob, e.g. "*.ts"',
        },
        case_insensitive: { type: "boolean", description: "Ignore case (default false)" },
        output_mode: {
          type: "string",
          enum: ["files", "content"],
          description: '"files" (default): matching file paths; "content": matching lines with numbers',
        },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    category: "info",
    source: "builtin",
    describe(args) {
      const path = stringArg(args, "path");
      const pattern = oneLine(stringArg(args, "pattern") ?? "", 60);
      return `Search for '${pattern}'${path === undefined ? "" : ` in ${path}`}`;
    },
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as GrepArgs;
      try {
        return await search(args, ctx, limits);
      } catch (error) {
        if (
          error instanceof GlobPatternError ||
          error instanceof RegexTimeoutError ||
          error instanceof SearchesBusyError
        )
          return errorOutput(error.message);
        if (ctx.signal.aborted) return errorOutput("Search cancelled");
        const output = fileErrorOutput(error, args.path ?? ".", ctx);
        if (output === undefined) throw error;
        return output;
      }
    },
  };
}

/** The pattern with the `u` flag when it allows it (for \p{…} and astral characters), else without. */
export function compileSearchPattern(pattern: string, caseInsensitive: boolean): RegExp | SyntaxError {
  const flags = caseInsensitive ? "i" : "";
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      return error as SyntaxError;
    }
  }
}

async function search(args: GrepArgs, ctx: ToolContext, limits: Limits): Promise<ToolOutput> {
  const regex = compileSearchPattern(args.pattern, args.case_insensitive === true);
  if (regex instanceof SyntaxError) return errorOutput(`Invalid regular expression: ${regex.message}`);
  const fileFilter = args.glob === undefined ? undefined : globFilter(args.glob);
  const userPath = args.path ?? ".";
  const location = await locateInWorkspace(ctx.workspace, userPath, { unconfined: ctx.unconfined });
  const workspace = location.workspace;
  const mode: OutputMode = args.output_mode ?? "files";
  const results: string[] = [];
  let full = false;
  const onMatch = (shown: string, lines: MatchedLines) => {
    if (full) return;
    if (mode === "files") results.push(shown);
    for (const line of lines) {
      results.push(`${shown}:${line.number}:${line.text}`);
      if (results.length >= limits.maxResults) break;
    }
    full = results.length >= limits.maxResults;
  };

  let matcher: LineSearch<string> | undefined;
  let walkTruncated = false;
  try {
    if (location.stats?.isFile() !== true && location.stats?.isDirectory() !== true) {
      return errorOutput(`${displayPath(workspace, location.path)} is not a regular file or directory`);
    }
    if (location.stats.isFile() && location.stats.size > limits.maxFileBytes) {
      const shown = displayPath(workspace, location.path);
      return errorOutput(
        `${shown} is ${location.stats.size} bytes, over Grep's limit of ${limits.maxFileBytes}`,
      );
    }
    const search = await LineSearch.start(
      regex,
      {
        timeoutMs: limits.timeoutMs,
        signal: ctx.signal,
        lines: mode === "content",
        maxLineChars: limits.maxLineChars,
        maxLinesPerFile: limits.maxResults,
      },
      onMatch,
    );
    matcher = search;
    // Files are read here (asynchronously) and matched in the worker. Unreadable files, files
    // that changed kind since the listing and files over the limit are passed over.
    const searchFile = async (file: ConfinedLocation, shown: string): Promise<void> => {
      const bytes = await readLocatedFile(file, shown, limits.maxFileBytes).catch(() => undefined);
      if (bytes !== undefined && !looksBinary(bytes)) await search.add(shown, bytes);
    };

    if (location.stats.isFile()) {
      await searchFile(location, displayPath(workspace, location.path));
    } else {
      const root = await openLocatedDir(location, userPath);
      try {
        const walk = await walkFiles(
          root,
          async (entry: WalkEntry) => {
            if (fileFilter !== undefined && !fileFilter(entry.relative)) return true;
            const file = await walkedFile(entry, workspace, ctx.unconfined, { stat: false });
            if (file === undefined) return true;
            try {
              await searchFile(file, displayPath(workspace, entry.path));
            } finally {
              await file.release();
            }
            return !full;
          },
          { skipDirs: limits.skipDirs, maxEntries: limits.maxEntries, signal: ctx.signal },
        );
        walkTruncated = walk.truncated;
      } finally {
        if (root !== location.dir) await root.close();
      }
    }
    await search.finish();
  } finally {
    matcher?.close();
    await location.release();
  }

  const notes: string[] = [];
  if (full)
    notes.push(
      `(reached the limit of ${limits.maxResults} results; there may be more: narrow the pattern, path or glob)`,
    );
  if (walkTruncated) notes.push("(the search stopped early: too many files; narrow the path)");
  if (results.length === 0) {
    return { output: ["No matches", ...notes].join("\n"), metadata: { count: 0 } };
  }
  return { output: [...results, ...notes].join("\n"), metadata: { count: results.length, complete: !full } };
}

/** A glob without "/" filters by file name at any depth; with "/" it filters the path from the search root. */
function globFilter(glob: string): (relative: string) => boolean {
  const regex = globToRegExp(glob);
  return glob.includes("/")
    ? (relative) => regex.test(relative)
    : (relative) => regex.test(basename(relative));
}
