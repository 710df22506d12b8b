/**
 * config/yaml-library.ts: the yaml package is loaded for the work at hand and kept by nothing
 * after it (not require's cache, not this module), so a collection frees it and the next caller
 * loads it again; a document parsed by one load is read correctly by the next, since yaml tells
 * node kinds apart by registered symbols.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { yamlLibrary } from "../../src/config/yaml-library.js";
import { parseYamlSource } from "../../src/config/yaml-source.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A full collection after the current job, when WeakRef targets read in it may go. */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

const yamlFiles = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((file) =>
    /[\\/]node_modules[\\/]yaml[\\/]/.test(file),
  );

/** Uses yaml in a job of its own and returns a weak reference to the copy it used. */
function useOnce(): WeakRef<object> {
  const first = yamlLibrary();
  assert.equal(yamlLibrary(), first, "a second caller in the same job loaded yaml again");
  assert.deepEqual(first.parse("a: 1\n"), { a: 1 });
  assert.deepEqual(yamlFiles(), [], "require's cache holds yaml's modules");
  return new WeakRef(first);
}

test("one load serves a job, require's cache keeps none of it, and a collection frees it", async () => {
  const held = useOnce();
  await collect();
  assert.equal(held.deref(), undefined, "yaml outlived a full collection with no caller holding it");
  const again = yamlLibrary();
  assert.notEqual(again, undefined);
  assert.equal(again.stringify({ b: [1, 2] }), "b:\n  - 1\n  - 2\n");
});

test("a document from one load is read by the next (no class identity involved)", async () => {
  const doc = yamlLibrary().parseDocument("agents:\n  - id: ana\n");
  await collect();
  const { isMap, isSeq } = yamlLibrary();
  const list = doc.getIn(["agents"], true);
  assert.ok(isSeq(list));
  assert.ok(isMap(list.items[0]));
});

test("a config file's positions are still found after the load that parsed it is gone", async () => {
  const { data, locate } = parseYamlSource("daemon:\n  port: 80\nlist:\n  - x\n", "daemon.yaml");
  assert.deepEqual(data, { daemon: { port: 80 }, list: ["x"] });
  await collect();
  assert.deepEqual(locate(["daemon", "port"], "value"), { line: 2, column: 9 });
  assert.deepEqual(locate(["list", 0], "key"), { line: 4, column: 5 });
});
