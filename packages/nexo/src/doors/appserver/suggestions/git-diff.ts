/**
 * The git diff of some workspace paths, for `workspace/commitMessage/suggest`: what changed in them
 * against HEAD (staged and unstaged alike), new untracked files included, cut to a size a model
 * request can carry.
 *
 * The paths come from a client, so they are held to the workspace: relative, and inside it once
 * resolved (no `..` out, no absolute path). git reads them as literal pathspecs
 * (`--literal-pathspecs`), so a name like `:(top)x` cannot widen what is read either.
 */
import { execFile } from "node:child_process";
import { realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { withoutSecrets } from "../../../secrets/names.js";

/** What git needs no more than this to answer; a wedged git must not hold the request. */
const GIT_TIMEOUT_MS = 30_000;
/** Larger outputs are cut anyway (maxDiffChars), so git's own is bounded too. */
const GIT_MAX_BUFFER = 32 * 1024 * 1024;
/** The hash of git's empty tree: the base of a diff in a repository with no commit yet. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Why a diff cannot be made; `kind` says whether the client asked wrongly or the workspace is not one git can read. */
export class DiffError extends Error {
  override readonly name = "DiffError";
  constructor(
    readonly kind: "path" | "not-a-repository" | "no-changes" | "git",
    message: string,
  ) {
    super(message);
  }
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

function git(cwd: string, args: readonly string[]): Promise<GitResult> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      "git",
      ["--literal-pathspecs", "-c", "core.quotepath=off", ...args],
      {
        cwd,
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: GIT_MAX_BUFFER,
        // No pager, no prompt, no external diff program: plain text out, nothing waits for a person.
        // No secrets either: a repository's own config can make git run programs (hooks,
        // core.fsmonitor), and those must not read the server's API keys.
        env: {
          ...withoutSecrets(process.env),
          GIT_PAGER: "cat",
          GIT_TERMINAL_PROMPT: "0",
          GIT_EXTERNAL_DIFF: "",
        },
      },
      (error, stdout, stderr) => {
        if (error && typeof (error as { code?: unknown }).code !== "number") {
          reject(new DiffError("git", `git could not run: ${error.message}`));
          return;
        }
        resolvePromise({ code: error ? Number((error as { code: number }).code) : 0, stdout, stderr });
      },
    );
  });
}

/** `paths` as workspace-relative names, each checked to stay inside `workspace`. */
export function confinePaths(workspace: string, paths: readonly string[]): string[] {
  if (paths.length === 0) throw new DiffError("path", "paths is empty: name at least one file or directory");
  return paths.map((path) => {
    if (path.includes("\0")) throw new DiffError("path", `path ${JSON.stringify(path)} contains a NUL byte`);
    if (isAbsolute(path))
      throw new DiffError(
        "path",
        `path ${JSON.stringify(path)} is absolute; paths are relative to the workspace`,
      );
    const inside = relative(workspace, resolve(workspace, path));
    if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside))
      throw new DiffError("path", `path ${JSON.stringify(path)} is outside the workspace ${workspace}`);
    return inside === "" ? "." : inside;
  });
}

/**
 * The diff of `paths` (workspace-relative) in `workspace`, at most `maxChars` characters long (a
 * cut diff ends with a line saying how much was left out).
 */
export async function diffOf(workspace: string, paths: readonly string[], maxChars: number): Promise<string> {
  let root: string;
  try {
    root = await realpath(workspace);
  } catch (error) {
    throw new DiffError(
      "not-a-repository",
      `the workspace ${workspace} cannot be read: ${(error as Error).message}`,
    );
  }
  const confined = confinePaths(root, paths);
  const inside = await git(root, ["rev-parse", "--is-inside-work-tree"]);
  if (inside.code !== 0 || inside.stdout.trim() !== "true")
    throw new DiffError("not-a-repository", `the workspace ${workspace} is not a git repository`);
  const head = await git(root, ["rev-parse", "--verify", "--quiet", "HEAD"]);
  const base = head.code === 0 ? "HEAD" : EMPTY_TREE;
  const tracked = await git(root, ["diff", "--no-color", "--no-ext-diff", base, "--", ...confined]);
  if (tracked.code !== 0) throw new DiffError("git", `git diff failed: ${tracked.stderr.trim()}`);
  let diff = tracked.stdout;
  const untracked = await git(root, ["ls-files", "--others", "--exclude-standard", "-z", "--", ...confined]);
  for (const file of untracked.stdout.split("\0").filter((name) => name !== "")) {
    if (diff.length >= maxChars) break;
    // --no-index exits 1 when the files differ, which a new file always does.
    const added = await git(root, [
      "diff",
      "--no-color",
      "--no-ext-diff",
      "--no-index",
      "--",
      "/dev/null",
      file,
    ]);
    if (added.code > 1) throw new DiffError("git", `git diff of ${file} failed: ${added.stderr.trim()}`);
    diff += added.stdout;
  }
  if (diff.trim() === "")
    throw new DiffError(
      "no-changes",
      `nothing changed in ${paths.join(", ")} (against ${base === "HEAD" ? "HEAD" : "an empty repository"})`,
    );
  if (diff.length <= maxChars) return diff;
  return `${diff.slice(0, maxChars)}\n[diff cut: ${diff.length - maxChars} more characters not shown]\n`;
}
