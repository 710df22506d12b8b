/**
 * `Glob`: finds files by name pattern, newest first.
 */
import { isAbsolute, join } from "node:path";
import type { Tool, ToolContext, ToolOutput } from "../types.js";
import { displayPath, locateInWorkspace, openLocatedDir } from "./confine.js";
import { GlobPatternError, globToRegExp, patternDepth, splitStaticPrefix } from "./glob-pattern.js";
import { errorOutput, fileErrorOutput, stringArg } from "./tool-output.js";
import { DEFAULT_SKIP_DIRS, walkedFile, walkFiles } from "./walk.js";

export interface GlobToolOptions {
  /** Paths listed at most. Default 100. */
  readonly maxResults?: number;
  /** Directory names not descended into. Default node_modules and .git. */
  readonly skipDirs?: readonly string[];
  /** Directory entries examined at most per call. Default 200 000. */
  readonly maxEntries?: number;
}

interface GlobArgs {
  pattern: string;
  path?: string;
}

export function createGlobTool(options: GlobToolOptions = {}): Tool {
  const maxResults = options.maxResults ?? 100;
  const skipDirs = options.skipDirs ?? DEFAULT_SKIP_DIRS;
  return {
    name: "Glob",
    description:
      "Find files whose path matches a glob pattern (`*`, `**`, `?`, `[a-z]`, `{a,b}`), newest first. " +
      `Patterns are relative to \`path\` (default: the workspace), e.g. "**/*.ts" or "src/*.{js,json}". ` +
      `Lists at most ${maxResults} files; ${skipDirs.join(" and ")} are skipped unless \`path\` points inside them.`,
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", minLength: 1, description: "The glob pattern" },
        path: {
          type: "string",
          minLength: 1,
          description: "Directory to search from (default: the workspace)",
        },
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    category: "info",
    source: "builtin",
    describe(args) {
      const path = stringArg(args, "path");
      return `Find files matching ${stringArg(args, "pattern") ?? "a pattern"}${path === undefined ? "" : ` in ${path}`}`;
    },
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as GlobArgs;
      try {
        return await findFiles(args, ctx, { maxResults, skipDirs, maxEntries: options.maxEntries });
      } catch (error) {
        if (error instanceof GlobPatternError) return errorOutput(error.message);
        if (ctx.signal.aborted) return errorOutput("Search cancelled");
        const output = fileErrorOutput(error, args.path ?? args.pattern, ctx);
        if (output === undefined) throw error;
        return output;
      }
    },
  };
}

interface Match {
  shown: string;
  mtimeMs: number;
}

async function findFiles(
  args: GlobArgs,
  ctx: ToolContext,
  limits: { maxResults: number; skipDirs: readonly string[]; maxEntries: number | undefined },
): Promise<ToolOutput> {
  const { base, rest } = splitStaticPrefix(args.pattern);
  // The literal start of the pattern is part of the directory, so "../x/*" is confined like a path.
  const directory = isAbsolute(base) ? base : join(args.path ?? ".", base);
  const matcher = globToRegExp(rest);
  const userPath = directory === "" ? "." : directory;
  const location = await locateInWorkspace(ctx.workspace, userPath, { unconfined: ctx.unconfined });
  const workspace = location.workspace;
  const matches: Match[] = [];
  let walk: { truncated: boolean };
  try {
    if (location.stats?.isDirectory() !== true)
      return errorOutput(`${displayPath(workspace, location.path)} is not a directory`);
    const root = await openLocatedDir(location, userPath);
    try {
      walk = await walkFiles(
        root,
        async (entry) => {
          if (!matcher.test(entry.relative)) return true;
          const file = await walkedFile(entry, workspace, ctx.unconfined);
          if (file !== undefined) {
            matches.push({ shown: displayPath(workspace, entry.path), mtimeMs: file.stats!.mtimeMs });
            await file.release();
          }
          return true;
        },
        {
          skipDirs: limits.skipDirs,
          maxDepth: patternDepth(rest),
          maxEntries: limits.maxEntries,
          signal: ctx.signal,
        },
      );
    } finally {
      if (root !== location.dir) await root.close();
    }
  } finally {
    await location.release();
  }

  const stopped = walk.truncated
    ? " (the search stopped early: too many files; narrow the pattern or path)"
    : "";
  if (matches.length === 0)
    return { output: `No files match ${args.pattern}${stopped}`, metadata: { count: 0 } };
  matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
  const shown = matches.slice(0, limits.maxResults).map((match) => match.shown);
  const lines = [...shown];
  if (matches.length > shown.length) {
    lines.push(
      `(showing ${shown.length} of ${matches.length} matching files, newest first; narrow the pattern)`,
    );
  }
  if (stopped !== "") lines.push(stopped.trim());
  return { output: lines.join("\n"), metadata: { count: shown.length, total: matches.length } };
}
