/**
 * Which `nexo` the test daemon runs. The SDK never imports the daemon: it spawns the CLI an author
 * has — given explicitly, named by NEXO_CLI, installed in the project (`node_modules/.bin/nexo`,
 * found walking up from the working directory), or on PATH — so the SDK needs no daemon code of its
 * own and a microapp is tested against the daemon its users will run.
 */
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";

/** How to start the CLI: a program and the arguments that come before nexo's own. */
export interface NexoCommand {
  program: string;
  args: string[];
  /** Where it was found, for error messages. */
  source: string;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A JavaScript entry runs under this Node (the test's own), anything else as an executable. */
function commandFor(path: string, source: string): NexoCommand {
  const real = realpathSync(path);
  return /\.[cm]?js$/.test(real)
    ? { program: process.execPath, args: [real], source }
    : { program: real, args: [], source };
}

function fromNodeModules(start: string): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const bin = join(dir, "node_modules", ".bin", "nexo");
    if (executable(bin)) return bin;
    if (dirname(dir) === dir) return undefined;
  }
}

function fromPath(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const bin = join(dir, "nexo");
    if (executable(bin)) return bin;
  }
  return undefined;
}

/**
 * The CLI to run: `explicit` (a path to `nexo` or to its `bin/nexo.js`), else `$NEXO_CLI`, else the
 * project's `node_modules/.bin/nexo`, else `nexo` on PATH. Throws naming each place looked at.
 */
export function findNexoCli(explicit?: string, env: NodeJS.ProcessEnv = process.env): NexoCommand {
  const given = explicit ?? env.NEXO_CLI;
  if (given !== undefined && given !== "") {
    const path = isAbsolute(given) ? given : resolve(given);
    try {
      accessSync(path, constants.R_OK);
    } catch {
      throw new Error(`the nexo CLI ${JSON.stringify(given)} does not exist or cannot be read`);
    }
    return commandFor(path, explicit !== undefined ? "the nexo option" : "NEXO_CLI");
  }
  const installed = fromNodeModules(process.cwd());
  if (installed !== undefined) return commandFor(installed, "node_modules/.bin");
  const onPath = fromPath(env);
  if (onPath !== undefined) return commandFor(onPath, "PATH");
  throw new Error(
    // Not `npm i -D nexo`: that name on the npm registry is an unrelated package.
    "no nexo CLI found: install the nexo package in this project from its packed tarball (npm i -D ./nexo-<version>.tgz; `npm run package` in a nexo clone), put nexo on PATH (npm install -g ./packages/nexo in the clone), set NEXO_CLI, or pass {nexo: '/path/to/nexo'}",
  );
}
