/**
 * Turns an entrypoint `command` ("absolute path or PATH binary", plugin contract §2) into the
 * absolute file that will run. The host resolves it itself, before spawning, for two reasons: the
 * sandbox must bind the binary's directory (and, for a symlink such as /usr/local/bin/node →
 * ~/.nvm/…/bin/node, the real one), and a missing or non-executable command should be a clear
 * error naming the command, not an ENOENT from deep inside bwrap or child_process.
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, resolve } from "node:path";

/** Why a command cannot run: there is no such file, it is not executable, or it is no command at all. */
export type CommandProblem = "not_found" | "not_executable" | "unusable";

export class CommandNotFoundError extends Error {
  readonly command: string;
  readonly problem: CommandProblem;
  /** What is wrong with it: "does not exist (/x/y)", "is not executable (/x/y)", … */
  readonly detail: string;
  constructor(command: string, detail: string, problem: CommandProblem = "not_found") {
    super(`entrypoint command "${command}" ${detail}`);
    this.name = "CommandNotFoundError";
    this.command = command;
    this.problem = problem;
    this.detail = detail;
  }
}

export interface ResolvedCommand {
  /** The absolute path to execute (symlinks kept, so argv[0]-sensitive tools behave). */
  path: string;
  /** The same file with every symlink resolved. */
  realPath: string;
  /** `dirname(path)` and `dirname(realPath)`, without duplicates: what a sandbox must expose. */
  dirs: string[];
}

export interface ResolveCommandOptions {
  /** The PATH to search for a bare name. */
  pathEnv: string | undefined;
  /** Base for a relative command containing a slash (`./bin/plugin`); usually the plugin's dir. */
  cwd?: string;
}

export function resolveCommand(command: string, options: ResolveCommandOptions): ResolvedCommand {
  if (command.trim() === "" || command.includes("\0")) {
    throw new CommandNotFoundError(command, "is not a usable command", "unusable");
  }
  let path: string;
  if (command.includes("/")) {
    if (!isAbsolute(command) && options.cwd === undefined) {
      throw new CommandNotFoundError(
        command,
        "is relative, and no directory was given to resolve it against",
        "unusable",
      );
    }
    path = isAbsolute(command) ? resolve(command) : resolve(options.cwd!, command);
    checkExecutable(command, path);
  } else {
    path = searchPath(command, options.pathEnv);
  }
  const realPath = realpathSync(path);
  const dirs = [dirname(path)];
  if (dirname(realPath) !== dirs[0]) dirs.push(dirname(realPath));
  return { path, realPath, dirs };
}

function searchPath(name: string, pathEnv: string | undefined): string {
  // An empty PATH entry means the current directory to a shell; a daemon must not run whatever
  // happens to sit in its working directory, so empty and relative entries are skipped.
  const dirs = (pathEnv ?? "").split(delimiter).filter((dir) => isAbsolute(dir));
  for (const dir of dirs) {
    const candidate = resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new CommandNotFoundError(name, `was not found on PATH (${dirs.join(delimiter) || "empty"})`);
}

function checkExecutable(command: string, path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new CommandNotFoundError(command, `does not exist (${path})`);
  }
  if (!isFile) throw new CommandNotFoundError(command, `is not a regular file (${path})`, "not_executable");
  if (!isExecutableFile(path))
    throw new CommandNotFoundError(command, `is not executable (${path})`, "not_executable");
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
