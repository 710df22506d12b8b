/**
 * What `nexo start` loads before its ready line on the local broker (issue 15, the idle daemon's
 * memory): the bundled chunks are recorded by a module hook, and none may carry the NATS client —
 * it loads only when broker.yaml asks for NATS (test/broker/nats.test.ts builds that broker through
 * the same createBroker, against a real nats-server) — nor the AppServer's wire schemas, which only
 * the AppServer door needs (the daemon imports the schema groups it uses by their own subpath, not
 * through the `@nexo/wire/schemas` index, which builds every group) — nor prom-client, which loads
 * with the first metric counted or scraped (daemon/metrics.ts) — nor ajv, though a plugin advertises
 * tools: their schemas get a structural check at the handshake and ajv compiles each on the tool's
 * first call (engine/tools/schema-validator.ts) — nor the engine's session code (the session, its
 * turn loop, the built-in tools), which loads with the first session (daemon/sessions.ts) — nor commander and the command
 * declarations, since a plain `nexo start` is read without them (cli/start-fast.ts). The
 * plugin protocol's schemas are loaded but built on first use (@nexo/wire's schemas/lazy.ts): a heap
 * snapshot taken at ready still holds every `llm.*`, `memory.*`, `hook.*`, host-service and
 * `tool.*` schema unbuilt, though the tool plugin has shaken hands. Every
 * chunk loaded is ASCII: V8 holds a
 * module's source for the process's life, as two-byte text (twice the bytes) when one character
 * of it is not ASCII (scripts/bundle-cli.mjs, asciiComments). yaml is no ES module of the daemon:
 * the config parse loads bundle/yaml.cjs through require and lets it go (config/yaml-library.ts),
 * so the heap snapshot holds none of its source. better-sqlite3 is required, not imported: an
 * import of a CommonJS package loads Node's CommonJS export lexer for the process's life. Node
 * built-ins are required, not imported (an import's namespace reads every lazy getter: webcrypto,
 * parseArgs, MIMEType, File), and pino's unused transport code (thread-stream, assert) is not
 * loaded. Every chunk loaded is compacted (scripts/bundle-compact.mjs): no comment, no indentation.
 * The daemon comes from a build of its own (its `daemon-…` files, far fewer ES modules, its boot
 * code in one chunk), which shares the one secrets module (bundle/secrets.js). Started as a user
 * starts it, through the launcher (bin/nexo), it loads no other file of the main build: the launcher
 * runs the daemon build's daemon-main.js, not bin/nexo.js and main.js with its chunks.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { CLI_PATH } from "../helpers/cli.js";

/** The `nexo` command a user runs (a POSIX sh launcher; it execs node, so the child is node). */
const LAUNCHER = join(CLI_PATH, "..", "nexo");

import { demoToolsConfigDir } from "../helpers/demo-config.js";

const HOOKS = `export async function load(url, context, next) {
  if (url.startsWith("file:")) (await import("node:fs")).appendFileSync(process.env.NEXO_TEST_LOAD_LOG, url + "\\n");
  return next(url, context);
}`;
// Node 20's module hooks see `import`s only; what is loaded through `require` (prom-client, which
// the daemon loads on first use with createRequire) is recorded by wrapping the CommonJS loader.
// The Node built-ins loaded so far (process.moduleLoadList) are written when the heap snapshot is
// asked for, right after ready.
const REGISTER = `import Module, { register } from "node:module"; import { appendFileSync } from "node:fs";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});
const load = Module._load;
Module._load = function (request, ...rest) { appendFileSync(process.env.NEXO_TEST_LOAD_LOG, "require:" + request + "\\n"); return load.call(this, request, ...rest); };
process.on("SIGUSR2", () => appendFileSync(process.env.NEXO_TEST_BUILTINS_LOG, process.moduleLoadList.join("\\n") + "\\n"));`;

/**
 * The groups of the lazy schemas a heap snapshot holds unbuilt, with how many of each: a lazy
 * schema not yet built is an object `{group, build, standIn, built}` that its stand-in's prototype
 * (a Proxy) keeps alive until the first use, after which nothing references it.
 */
function unbuiltLazyGroups(snapshotText: string): Map<string, number> {
  const snapshot = JSON.parse(snapshotText) as {
    snapshot: {
      meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] };
    };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const {
    node_fields: nodeFields,
    edge_fields: edgeFields,
    node_types: nodeTypes,
    edge_types: edgeTypes,
  } = snapshot.snapshot.meta;
  const [N, E] = [nodeFields.length, edgeFields.length];
  const [typeAt, nameAt, edgeCountAt] = ["type", "name", "edge_count"].map((f) => nodeFields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const [edgeTypeAt, edgeNameAt, toAt] = ["type", "name_or_index", "to_node"].map((f) =>
    edgeFields.indexOf(f),
  ) as [number, number, number];
  const { nodes, edges, strings } = snapshot;
  const groups = new Map<string, number>();
  for (let node = 0, edge = 0; node < nodes.length; node += N) {
    const end = edge + nodes[node + edgeCountAt]! * E;
    const names = new Map<string, number>();
    for (; edge < end; edge += E)
      if (edgeTypes[0][edges[edge + edgeTypeAt]!] === "property")
        names.set(strings[edges[edge + edgeNameAt]!]!, edges[edge + toAt]!);
    const group = names.get("group");
    if (nodeTypes[0][nodes[node + typeAt]!] !== "object" || group === undefined) continue;
    if (!names.has("build") || !names.has("standIn") || !names.has("built")) continue;
    const name = strings[nodes[group + nameAt]!]!;
    groups.set(name, (groups.get(name) ?? 0) + 1);
  }
  return groups;
}

test("nexo start on the local broker is ready without the NATS client, the AppServer schemas, prom-client or ajv, from ASCII chunks, unused plugin schemas unbuilt", async () => {
  // The quickstart's tool plugin (three tools, each with an input_schema) on the scripted model.
  const dir = demoToolsConfigDir("nexo-start-startup-");
  const log = join(dir, "loaded.txt");
  const builtinsLog = join(dir, "builtins.txt");
  const child = spawn("/bin/sh", [LAUNCHER, "start", "--config", dir], {
    cwd: dir,
    env: {
      // The launcher's node: the one running this test.
      NEXO_NODE: process.execPath,
      NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(REGISTER)} --heapsnapshot-signal=SIGUSR2`,
      PATH: process.env.PATH,
      HOME: dir,
      NEXO_LOG: "info",
      NEXO_TEST_LOAD_LOG: log,
      NEXO_TEST_BUILTINS_LOG: builtinsLog,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  try {
    const loadedAtReady = await new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line:\n${stderr}`)), 60_000);
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes('"msg":"nexo daemon ready')) {
          clearTimeout(timer);
          resolve(readFileSync(log, "utf8").split("\n").filter(Boolean));
        }
      });
      child.once("close", () => reject(new Error(`the daemon exited before ready:\n${stderr}`)));
    });
    assert.ok(
      // metrics.ts requires prom-client's parts by path (prom-client/lib/...), not its index.
      !loadedAtReady.some((entry) => /^require:prom-client(\/|$)/.test(entry)),
      "prom-client is loaded before the first metric or scrape",
    );
    assert.match(stderr, /"plugins":\[[^\]]*"demo"/, "the demo tools plugin is not running at ready");
    const ajv = loadedAtReady.filter((entry) => /^require:ajv/.test(entry));
    assert.deepEqual(ajv, [], "ajv is loaded before any tool was called");
    const chunks = loadedAtReady
      .filter((u) => u.startsWith("file:") && u.includes("/bundle/"))
      .map((u) => fileURLToPath(u));
    const sources = chunks.map((f) => readFileSync(f, "utf8")).join("\n");
    assert.ok(sources.includes("broker/local.js"), `the local broker is not among ${chunks.join(" ")}`);
    assert.ok(!sources.includes("node_modules/nats/"), "the NATS client is loaded before ready");
    // A plain launch is read without commander (cli/start-fast.ts): neither it nor the command
    // declarations are held by the daemon.
    assert.ok(!sources.includes("node_modules/commander/"), "commander is loaded by a plain nexo start");
    assert.ok(
      !sources.includes("nexo/dist/cli/program.js"),
      "the command declarations are loaded by a plain nexo start",
    );
    assert.ok(sources.includes("wire/dist/schemas/plugin/"), "the plugin schemas are not among the chunks");
    assert.ok(
      !sources.includes("wire/dist/schemas/appserver/"),
      "the AppServer's schemas are loaded before ready",
    );
    for (const engine of [
      "engine/session.js",
      "engine/turn.js",
      "engine/assemble.js",
      "engine/tools/builtins.js",
    ])
      assert.ok(!sources.includes(`nexo/dist/${engine}`), `${engine} is loaded before the first session`);
    // The command tree lists the scaffolders' choices (scaffold/choices), not their templates.
    for (const template of ["scaffold/plugin.js", "scaffold/microapp.js", "scaffold/config-dir.js"])
      assert.ok(!sources.includes(template), `${template} is loaded before ready`);
    assert.ok(!sources.includes("node_modules/yaml/"), "yaml is loaded as an ES module chunk");
    assert.ok(loadedAtReady.includes("require:./yaml.cjs"), "the config was parsed without bundle/yaml.cjs");
    assert.ok(!sources.includes("node_modules/smol-toml/"), "smol-toml is loaded as an ES module chunk");
    assert.ok(
      loadedAtReady.includes("require:./smol-toml.cjs"),
      "the plugin manifests were parsed without bundle/smol-toml.cjs",
    );
    assert.ok(loadedAtReady.includes("require:better-sqlite3"), "better-sqlite3 was not required");
    assert.deepEqual(
      loadedAtReady.filter((entry) => entry.startsWith("file:") && entry.includes("/better-sqlite3/")),
      [],
      "better-sqlite3 is imported as an ES module dependency",
    );
    const twoByte = chunks.filter((file) => /[\u0080-\uffff]/.test(readFileSync(file, "utf8")));
    assert.deepEqual(twoByte, [], "chunks with non-ASCII text");
    // Every chunk loaded is compacted (scripts/bundle-compact.mjs): V8 holds its source for the
    // process's life, so no comment (the JSDoc esbuild keeps) and almost no indentation is left;
    // what is left is inside template literals, and a space before a line's dynamic `import(`.
    // The daemon is a build of its own (scripts/bundle-cli.mjs, DAEMON_ENTRY): its files are
    // `daemon-…`, and the modules main.js loaded before it are not built into them again, so the
    // secrets captured at start-up (secrets/known.ts) are the ones every redaction reads.
    const daemonFiles = chunks.filter((file) => /[\\/]daemon-[^\\/]+\.js$/.test(file));
    assert.ok(
      daemonFiles.some((file) => file.endsWith("daemon-start.js")),
      "the daemon's own build is not loaded",
    );
    const bytes = (files: string[]) =>
      files.reduce((sum, file) => sum + readFileSync(file, "utf8").length, 0);
    assert.ok(
      bytes(daemonFiles) >= bytes(chunks) / 2,
      `${bytes(daemonFiles)} of ${bytes(chunks)} bytes loaded from the daemon build`,
    );
    // The boot code is one chunk (scripts/bundle-cli.mjs, bootInOneChunk): beside it, the daemon's
    // entry, start-heap, esbuild's helpers and start-run's own re-exports. It came in 26 files.
    // Before them, the daemon build's entry (daemon-main.js) and the secrets module (one file),
    // nothing else of the main build: 13 ES modules in all before daemon-main.js, 7 now.
    assert.ok(
      daemonFiles.some((file) => file.endsWith("daemon-main.js")),
      "the launcher did not start the daemon's own entry",
    );
    assert.ok(daemonFiles.length <= 6, `the daemon's build comes in ${daemonFiles.length} files`);
    assert.deepEqual(
      chunks.filter((file) => !daemonFiles.includes(file)).map((file) => file.split(/[\\/]/).pop()),
      ["secrets.js"],
      "files of the main build loaded by the daemon",
    );
    const esModules = loadedAtReady.filter((entry) => entry.startsWith("file:"));
    assert.ok(
      esModules.length <= 7,
      `nexo start loads ${esModules.length} ES modules: ${esModules.join(" ")}`,
    );
    const secretsCopies = chunks.filter((file) =>
      readFileSync(file, "utf8").includes("// packages/nexo/dist/secrets/known.js"),
    );
    assert.equal(secretsCopies.length, 1, `secrets/known.js in ${secretsCopies.join(", ")}`);
    const commented = chunks.filter((file) => /^\s*\/\*\*/m.test(readFileSync(file, "utf8")));
    assert.deepEqual(commented, [], "chunks with JSDoc comments");
    const indentation = [...sources.matchAll(/^[ \t]+/gm)].reduce((sum, match) => sum + match[0].length, 0);
    assert.ok(indentation < sources.length / 200, `${indentation} bytes of indentation in ${sources.length}`);

    // What the plugin's handshake did not need is still unbuilt: every schema of these files.
    child.kill("SIGUSR2");
    let unbuilt: Map<string, number> | undefined;
    let snapshotText = "";
    for (let tries = 0; unbuilt === undefined; tries++) {
      await sleep(250);
      const file = readdirSync(dir).find((name) => name.endsWith(".heapsnapshot"));
      try {
        if (file !== undefined) {
          snapshotText = readFileSync(join(dir, file), "utf8");
          unbuilt = unbuiltLazyGroups(snapshotText);
        }
      } catch (error) {
        // still being written: not JSON yet
        if (tries > 240) throw error;
      }
    }
    // Node internals that only an ES module import's namespace of node:crypto, node:util or
    // node:buffer loads (it reads every lazy getter), and the logger's unused dependencies
    // (thread-stream's assert): the bundle requires built-ins and defers those requires
    // (scripts/bundle-cli.mjs).
    const builtins = readFileSync(builtinsLog, "utf8").split("\n");
    assert.ok(builtins.includes("NativeModule crypto"), "the built-ins list was not written");
    for (const unused of [
      "NativeModule internal/crypto/webcrypto",
      "NativeModule internal/util/parse_args/parse_args",
      "NativeModule internal/mime",
      "NativeModule internal/file",
      "NativeModule assert",
    ])
      assert.ok(!builtins.includes(unused), `${unused} is loaded at ready`);

    // The snapshot's full collection freed yaml: its source text is not in the heap.
    const yamlSource = readFileSync(fileURLToPath(new URL("../../bundle/yaml.cjs", import.meta.url)), "utf8");
    assert.ok(yamlSource.length > 100_000, "bundle/yaml.cjs is not the yaml package");
    assert.ok(
      !snapshotText.includes(JSON.stringify(yamlSource.slice(0, 400)).slice(1, -1)),
      "the idle daemon holds yaml's source",
    );
    const expected = {
      "plugin.llm": 17,
      "plugin.memory": 9,
      "plugin.services": 9,
      "plugin.hook": 3,
      "plugin.tool": 4,
    };
    for (const [group, count] of Object.entries(expected))
      assert.equal(
        unbuilt.get(group),
        count,
        `${group}: ${unbuilt.get(group) ?? 0} of its ${count} schemas unbuilt`,
      );
  } finally {
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const code = await exited;
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, `exit ${code}: ${stderr}`);
  }
});
