#!/usr/bin/env node
// Makes the startup snapshot bin/nexo starts `nexo agent` from
// (docs/performance.md, "Cold start"): for each bundle/snapshot/<command>.cjs (scripts/bundle-cli.mjs),
// `node --build-snapshot` writes bundle/snapshot/<command>.blob. Run by `npm run build` in the
// repository and by the packed package's install; `--if-possible` (the install) reports a failure
// and exits 0, since bin/nexo runs the ES module entry when a blob is missing.
//
// A blob loads only into the exact node binary that built it (another version, or V8 flags other
// than the build's, refuse it and exit). So the blobs are built by the node bin/nexo will find:
// the first `node` on PATH, looked up as bin/nexo looks it up. Its path is written last, to
// bundle/snapshot/node, once every blob is in place: bin/nexo uses the blobs only while that file
// names the node it finds and that binary is not newer than the blob (replaced in place).
//
// The build runs with an empty environment and in the snapshot directory: the script evaluates
// the door's modules, and nothing of the building user's environment (keys, tokens, paths) may be
// captured in a heap every later process starts from (test/cli/snapshot.test.ts greps for one).
import { execFileSync } from "node:child_process";
import { accessSync, constants, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

// --dir: another directory of snapshot scripts (the tests build one with a canary in the environment).
const { values } = parseArgs({ options: { "if-possible": { type: "boolean" }, dir: { type: "string" } } });
const ifPossible = values["if-possible"] === true;
const dir = values.dir ?? fileURLToPath(new URL("../bundle/snapshot/", import.meta.url));
const stamp = join(dir, "node");

/** The first executable `node` on PATH, as bin/nexo finds it (an empty entry is the current directory). */
function nodeOnPath() {
  for (const entry of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(entry === "" ? "." : entry, "node");
    try {
      accessSync(candidate, constants.X_OK);
      if (!statSync(candidate).isDirectory()) return candidate;
    } catch {}
  }
  return undefined;
}

try {
  rmSync(stamp, { force: true });
  const node = nodeOnPath();
  if (node === undefined) throw new Error("no node on PATH");
  const scripts = readdirSync(dir).filter((name) => name.endsWith(".cjs"));
  if (scripts.length === 0) throw new Error(`no snapshot scripts in ${dir}`);
  for (const script of scripts) {
    const blob = join(dir, script.replace(/\.cjs$/, ".blob"));
    const partial = `${blob}.partial`;
    execFileSync(node, ["--snapshot-blob", partial, "--build-snapshot", script], {
      cwd: dir,
      env: {},
      // Node warns that some built-in modules are not verified in snapshots; the tests check
      // what nexo uses of them.
      stdio: ["ignore", "inherit", "pipe"],
    });
    renameSync(partial, blob);
  }
  writeFileSync(stamp, `${node}\n`);
} catch (error) {
  const message = `nexo: no startup snapshot (${error.stderr?.toString().trim() || error.message}); nexo starts without it, more slowly`;
  process.stderr.write(`${message}\n`);
  if (!ifPossible) process.exit(1);
}
