/**
 * bin/nexo, the `nexo` command: a POSIX sh script that chooses between the startup snapshot of
 * `nexo agent` and the ES module entry, then `exec`s node. Here it runs in a
 * copy of the package's layout with a stand-in `node` on PATH that prints what it was given, its
 * pid and exits with a status of its own, so each decision is seen directly: the snapshot only
 * when the stamp names the node chosen now (NEXO_NODE, else the first on PATH), that node is not
 * newer than the blob, the blob is there and NODE_OPTIONS is empty; arguments, pid (exec, no
 * second process) and the exit status unchanged; the package found through npm's symlink.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const LAUNCHER = fileURLToPath(new URL("../../bin/nexo", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "nexo-launcher-"));
after(() => rmSync(root, { recursive: true, force: true }));

const pkg = join(root, "pkg");
const snapshot = join(pkg, "bundle", "snapshot");
const pathDir = join(root, "path");
const fakeNode = join(pathDir, "node");
const launcher = join(pkg, "bin", "nexo");
const agentBlob = join(snapshot, "agent.blob");

interface Launch {
  /** What the stand-in node was given, one argument per entry. */
  argv: string[];
  pid: number;
  childPid: number | undefined;
  code: number | null;
}

function launch(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Launch> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { PATH: `${pathDir}:/usr/bin:/bin`, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const [pid, ...argv] = out.split("\0").slice(0, -1);
      resolve({ argv, pid: Number(pid), childPid: child.pid, code });
    });
  });
}

beforeEach(() => {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(pkg, "bin"), { recursive: true });
  mkdirSync(snapshot, { recursive: true });
  mkdirSync(pathDir);
  copyFileSync(LAUNCHER, launcher);
  chmodSync(launcher, 0o755);
  writeFileSync(join(pkg, "bin", "nexo.js"), "");
  // Prints its pid and arguments NUL-separated, and exits 7.
  writeFileSync(fakeNode, `#!/bin/sh\nprintf '%s\\0' "$$" "$@"\nexit 7\n`);
  chmodSync(fakeNode, 0o755);
  writeFileSync(agentBlob, "blob");
  writeFileSync(join(snapshot, "node"), `${fakeNode}\n`);
  // The node binary older than the blob, as when the blob was built by it.
  const past = new Date(Date.now() - 60_000);
  utimesSync(fakeNode, past, past);
});

const ESM = (...args: string[]): string[] => [join(pkg, "bin", "nexo.js"), ...args];
/** The blob as bin/nexo names it: through its own directory. */
const SNAPSHOT = (...args: string[]): string[] => [
  "--snapshot-blob",
  `${pkg}/bin/../bundle/snapshot/agent.blob`,
  ...args,
];

describe("bin/nexo", () => {
  test("starts nexo agent from its snapshot, with the arguments, pid and exit status unchanged", async () => {
    const args = ["agent", "--json-stream", "--system-prompt", "two  words\nand 'quotes' \"$HOME\" *", ""];
    const run = await launch(launcher, args);
    assert.deepEqual(run.argv, SNAPSHOT(...args));
    assert.equal(run.pid, run.childPid, "node runs in the launcher's own process (exec)");
    assert.equal(run.code, 7);
  });

  test("runs every other command, and a command without a blob, through the ES module entry", async () => {
    assert.deepEqual((await launch(launcher, ["--version"])).argv, ESM("--version"));
    assert.deepEqual((await launch(launcher, [])).argv, ESM());
    assert.deepEqual((await launch(launcher, ["app-server"])).argv, ESM("app-server"));
  });

  test("starts the daemon with one V8 worker thread, two malloc arenas and a fixed mmap threshold, unless the operator chose", async () => {
    // This stand-in also prints the malloc settings it was started with.
    writeFileSync(
      fakeNode,
      `#!/bin/sh\nprintf '%s\\0' "$$" "MALLOC_ARENA_MAX=$MALLOC_ARENA_MAX" "MALLOC_MMAP_THRESHOLD_=$MALLOC_MMAP_THRESHOLD_" "NEXO_LAUNCHER_SET=\${NEXO_LAUNCHER_SET-unset}" "$@"\nexit 7\n`,
    );
    // The launcher names what it set, so that the daemon takes it back out of its environment.
    const DAEMON = [
      "MALLOC_ARENA_MAX=2",
      "MALLOC_MMAP_THRESHOLD_=49152",
      "NEXO_LAUNCHER_SET=MALLOC_ARENA_MAX MALLOC_MMAP_THRESHOLD_",
      "--v8-pool-size=1",
    ];
    const run = await launch(launcher, ["start", "--foreground"]);
    assert.deepEqual(run.argv, [...DAEMON, ...ESM("start", "--foreground")]);
    assert.equal(run.pid, run.childPid, "node runs in the launcher's own process (exec)");
    assert.equal(run.code, 7);
    const chosen = await launch(launcher, ["start"], {
      MALLOC_ARENA_MAX: "4",
      MALLOC_MMAP_THRESHOLD_: "131072",
    });
    assert.deepEqual(chosen.argv, [
      "MALLOC_ARENA_MAX=4",
      "MALLOC_MMAP_THRESHOLD_=131072",
      "NEXO_LAUNCHER_SET=",
      "--v8-pool-size=1",
      ...ESM("start"),
    ]);
    const oneChosen = await launch(launcher, ["start"], { MALLOC_ARENA_MAX: "4" });
    assert.deepEqual(oneChosen.argv, [
      "MALLOC_ARENA_MAX=4",
      "MALLOC_MMAP_THRESHOLD_=49152",
      "NEXO_LAUNCHER_SET=MALLOC_MMAP_THRESHOLD_",
      "--v8-pool-size=1",
      ...ESM("start"),
    ]);
    // The global --log-format before the command (both spellings) is the same daemon launch.
    for (const global of [["--log-format", "json"], ["--log-format=json"]]) {
      const json = await launch(launcher, [...global, "start"]);
      assert.deepEqual(json.argv, [...DAEMON, ...ESM(...global, "start")]);
    }
    assert.deepEqual((await launch(launcher, ["--log-format", "json", "agent"])).argv, [
      "MALLOC_ARENA_MAX=",
      "MALLOC_MMAP_THRESHOLD_=",
      "NEXO_LAUNCHER_SET=unset",
      ...ESM("--log-format", "json", "agent"),
    ]);
  });

  test("starts the daemon from the daemon build's own entry once it is built, bin/nexo.js before", async () => {
    // Only built (a fresh clone has no bundle/): bin/nexo.js then says that nexo is not built.
    assert.deepEqual((await launch(launcher, ["start"])).argv, ["--v8-pool-size=1", ...ESM("start")]);
    writeFileSync(join(pkg, "bundle", "daemon-main.js"), "");
    const DAEMON_MAIN = `${pkg}/bin/../bundle/daemon-main.js`;
    const run = await launch(launcher, ["start", "--config", "x"]);
    assert.deepEqual(run.argv, ["--v8-pool-size=1", DAEMON_MAIN, "start", "--config", "x"]);
    assert.equal(run.pid, run.childPid, "node runs in the launcher's own process (exec)");
    for (const global of [["--log-format", "json"], ["--log-format=json"]])
      assert.deepEqual((await launch(launcher, [...global, "start"])).argv, [
        "--v8-pool-size=1",
        DAEMON_MAIN,
        ...global,
        "start",
      ]);
    // Every other command still runs main.js through bin/nexo.js.
    assert.deepEqual((await launch(launcher, ["--version"])).argv, ESM("--version"));
    assert.deepEqual(
      (await launch(launcher, ["--log-format", "json", "agent"])).argv,
      ESM("--log-format", "json", "agent"),
    );
  });

  test("leaves the snapshot for the ES module entry when node could refuse it", async () => {
    assert.deepEqual(
      (await launch(launcher, ["agent"], { NODE_OPTIONS: "--max-old-space-size=4096" })).argv,
      ESM("agent"),
      "NODE_OPTIONS set",
    );

    writeFileSync(join(snapshot, "node"), "/usr/local/bin/node\n");
    assert.deepEqual((await launch(launcher, ["agent"])).argv, ESM("agent"), "built by another node");

    rmSync(join(snapshot, "node"));
    assert.deepEqual(
      (await launch(launcher, ["agent"])).argv,
      ESM("agent"),
      "no stamp (a build that failed)",
    );

    writeFileSync(join(snapshot, "node"), `${fakeNode}\n`);
    const future = new Date(Date.now() + 60_000);
    utimesSync(fakeNode, future, future);
    assert.deepEqual((await launch(launcher, ["agent"])).argv, ESM("agent"), "node replaced after the build");

    const past = new Date(Date.now() - 60_000);
    utimesSync(fakeNode, past, past);
    assert.deepEqual((await launch(launcher, ["agent"])).argv, SNAPSHOT("agent"), "the same build again");

    rmSync(agentBlob);
    assert.deepEqual((await launch(launcher, ["agent"])).argv, ESM("agent"), "no blob");
  });

  test("runs the node NEXO_NODE names (nexo starting nexo), and does not pass NEXO_NODE on", async () => {
    // Another node, elsewhere: prints "chosen", whether it saw NEXO_NODE, and its arguments.
    const chosen = join(root, "chosen", "node");
    mkdirSync(join(root, "chosen"));
    writeFileSync(
      chosen,
      `#!/bin/sh\nprintf '%s\\0' "$$" chosen "NEXO_NODE=\${NEXO_NODE-unset}" "$@"\nexit 7\n`,
    );
    chmodSync(chosen, 0o755);
    const start = await launch(launcher, ["start"], { NEXO_NODE: chosen });
    assert.deepEqual(start.argv, ["chosen", "NEXO_NODE=unset", "--v8-pool-size=1", ...ESM("start")]);
    assert.equal(start.pid, start.childPid, "node runs in the launcher's own process (exec)");
    assert.equal(start.code, 7);
    // The snapshot only for the node that built it: NEXO_NODE is checked against the stamp as the
    // node from PATH is.
    assert.deepEqual((await launch(launcher, ["agent"], { NEXO_NODE: chosen })).argv, [
      "chosen",
      "NEXO_NODE=unset",
      ...ESM("agent"),
    ]);
    assert.deepEqual((await launch(launcher, ["agent"], { NEXO_NODE: fakeNode })).argv, SNAPSHOT("agent"));
    // Empty: the first node on PATH.
    assert.deepEqual((await launch(launcher, ["--version"], { NEXO_NODE: "" })).argv, ESM("--version"));
  });

  test("finds the package through npm's symlinks", async () => {
    const binDir = join(root, "node_modules", ".bin");
    mkdirSync(binDir, { recursive: true });
    symlinkSync(join("..", "..", "pkg", "bin", "nexo"), join(binDir, "nexo"));
    symlinkSync(join(binDir, "nexo"), join(root, "nexo-again"));
    const run = await launch(join(root, "nexo-again"), ["agent"]);
    assert.equal(run.argv[0], "--snapshot-blob");
    assert.equal(run.argv.at(-1), "agent");
    // The blob path goes through the links' directories; it names the same file.
    assert.match(run.argv[1]!, /pkg\/bin\/\.\.\/bundle\/snapshot\/agent\.blob$/);
  });
});
