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
 * Every launch the launcher sends to a snapshot is served in the snapshot's process: the command's
 * fast start, its door, or commander with the command's declaration (cli/snapshot-agent.ts), so
 * `nexo agent --help` or a bad flag starts node once, as a served launch does. The ES module entry
 * used to be re-run in a child for those: a second Node start.
 */
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startupSnapshot } from "node:v8";
import { startUp } from "./start-up.js";

/** Where the bundle is, as a module URL at its depth (bundle/main.js): what `import.meta.url` reads. */
declare global {
  var __nexoBundleUrl: string | undefined;
}

/** A command's work for these arguments (every launch of the command: help and usage errors too). */
export type SnapshotCommand = (args: readonly string[], env: NodeJS.ProcessEnv) => Promise<void>;

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
    void start(command).catch((error: unknown) => {
      process.stderr.write(`nexo: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    });
  });
}

async function start(command: SnapshotCommand): Promise<void> {
  const startup = await startUp();
  // process.argv: node, then the arguments (no script): the command's name, then its own.
  await command(process.argv.slice(2), startup.env);
}
