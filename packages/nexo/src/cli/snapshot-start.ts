/**
 * Starting a command from a V8 startup snapshot (docs/performance.md, "Cold start").
 *
 * scripts/bundle-cli.mjs bundles each snapshot entry (snapshot-agent.ts; the only one, see there)
 * into one CommonJS script, and bin/build-snapshot.mjs runs it with `node --build-snapshot`: the
 * script's top level (every module of the command's door, the protocol's schemas, the provider
 * SDK) is evaluated then, and the heap it leaves is saved in a blob. bin/nexo starts
 * `node --snapshot-blob BLOB ARGS` for the command, so the process begins with that heap instead
 * of compiling and evaluating the door, and runs the function given to `fromSnapshot`.
 *
 * What belongs to one run is therefore never touched while the snapshot is built: the
 * environment (the build runs with an empty one, and the secrets are captured here, at start),
 * argv, the clock, random state (uuid's pool fills on first use), stdio. Two things a snapshot
 * cannot hold are found at start instead: where the package is (the blob's path on node's
 * command line; `import.meta.url` reads it through `globalThis.__nexoBundleUrl`, see the bundler)
 * and better-sqlite3's native addon, which the store loads on its first open. Node's own HTTP
 * modules (node:http, and undici behind the SDK's first `Headers`) load at run time as they do from
 * the ES module entry: in Node 20 `node:http` cannot even be loaded while a snapshot is built (its
 * top level calls `Array.prototype.toSorted`, which the builder's context lacks).
 *
 * A launch the command's snapshot does not take (snapshot-agent.ts serves `--session-id` and
 * `--resume` with its door; a flag left to commander, a value commander might read differently,
 * `--help`) needs commander and the rest of the CLI, which the snapshot does not hold (it
 * would make every start slower) and cannot import (a snapshot's script has no ES module loader).
 * It runs the ES module entry, bin/nexo.js, in a child with the environment as it was, stdio
 * shared and signals passed on, and exits as the child did: correct, at the cost of a second start.
 */
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startupSnapshot } from "node:v8";
import { startUp } from "./start-up.js";

/** Where the bundle is, as a module URL at its depth (bundle/main.js): what `import.meta.url` reads. */
declare global {
  var __nexoBundleUrl: string | undefined;
}

/** A command's fast start: the work for these arguments, or undefined when commander must run them. */
export type SnapshotCommand = (
  args: readonly string[],
  env: NodeJS.ProcessEnv,
) => (() => Promise<void>) | undefined;

/** The `--snapshot-blob` path node was started with (bin/nexo puts it on the command line). */
function blobPath(): string | undefined {
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--snapshot-blob") return argv[i + 1];
    if (arg.startsWith("--snapshot-blob=")) return arg.slice("--snapshot-blob=".length);
  }
  return undefined;
}

/** Makes `command` the snapshot's main: what runs when a process starts from the blob. */
export function fromSnapshot(command: SnapshotCommand): void {
  startupSnapshot.setDeserializeMainFunction(() => {
    // The blob lives in bundle/snapshot/; the package may have moved since it was built.
    const blob = blobPath();
    const snapshotDir = blob === undefined ? undefined : dirname(resolve(blob));
    if (snapshotDir !== undefined)
      globalThis.__nexoBundleUrl = pathToFileURL(join(snapshotDir, "..", "main.js")).href;
    void start(command, snapshotDir).catch((error: unknown) => {
      process.stderr.write(`nexo: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    });
  });
}

async function start(command: SnapshotCommand, snapshotDir: string | undefined): Promise<void> {
  const startup = await startUp();
  // process.argv: node, then the arguments (no script).
  const args = process.argv.slice(1);
  const run = command(args.slice(1), startup.env);
  if (run !== undefined) return run();
  if (snapshotDir === undefined)
    throw new Error("started from a snapshot without --snapshot-blob on node's command line");
  runEntryInChild(join(snapshotDir, "..", "..", "bin", "nexo.js"), args, startup.env);
}

/** Runs the ES module entry with `args` as this process's stand-in, and ends as it ends. */
function runEntryInChild(entry: string, args: readonly string[], env: NodeJS.ProcessEnv): void {
  const child = spawn(process.execPath, [entry, ...args], { stdio: "inherit", env });
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  const pass = (signal: NodeJS.Signals): void => void child.kill(signal);
  for (const signal of signals) process.on(signal, pass);
  child.on("error", (error) => {
    process.stderr.write(`nexo: cannot start ${entry}: ${error.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    for (const name of signals) process.off(name, pass);
    // Ended by a signal: end the same way, so the caller sees what it would have seen.
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
