/**
 * config/disposable-schema.ts: the stand-in behaves as the schema it builds (parse, safeParse,
 * instanceof, typed errors), builds it only when read, and lets a collection free it once no parse
 * holds it — what keeps a config file's schemas out of an idle daemon.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { z } from "zod";
import { disposableSchema } from "../../src/config/disposable-schema.js";
import { AgentsFileSchema } from "../../src/daemon/config/agents.js";
import { AppServerFileSchema } from "../../src/daemon/config/appserver.js";
import { DEFAULT_MEMORY_CONFIG, MemoryFileSchema } from "../../src/daemon/config/memory.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A full collection after the current job, when WeakRef targets read in it may go. */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

test("the stand-in parses, fails and answers instanceof as the schema does", () => {
  const schema = disposableSchema(() => z.strictObject({ port: z.int().min(1).default(80) }));
  assert.deepEqual(schema.parse({}), { port: 80 });
  const failed = schema.safeParse({ port: 0, extra: true });
  assert.equal(failed.success, false);
  assert.deepEqual(failed.error?.issues.map((issue) => issue.code).sort(), [
    "too_small",
    "unrecognized_keys",
  ]);
  assert.ok(schema instanceof z.ZodObject);
  assert.ok("_zod" in schema);
  assert.deepEqual(z.array(z.string()).parse(["a"]), ["a"]);
  assert.deepEqual(schema.optional().parse(undefined), undefined);
});

test("the schema is built on the first read, freed once unused, and built again when read", async () => {
  let builds = 0;
  const schema = disposableSchema(() => {
    builds++;
    return z.strictObject({ name: z.string() });
  });
  assert.equal(builds, 0, "built before any read");
  assert.deepEqual(schema.parse({ name: "a" }), { name: "a" });
  assert.deepEqual(schema.parse({ name: "b" }), { name: "b" });
  assert.equal(builds, 1, "rebuilt within one job");
  await collect();
  assert.deepEqual(schema.parse({ name: "c" }), { name: "c" });
  assert.equal(builds, 2, "the schema outlived a full collection with no parse holding it");
});

test("a config file's schema is one of them: agents.yaml's parses the same after a collection", async () => {
  const file = { agents: [{ id: "ana", model: { provider: "scripted", model: "m" } }] };
  const first = AgentsFileSchema.parse(file);
  await collect();
  assert.deepEqual(AgentsFileSchema.parse(file), first);
  const duplicate = AgentsFileSchema.safeParse({ agents: [file.agents[0], file.agents[0]] });
  assert.equal(duplicate.success, false);
  assert.match(JSON.stringify(duplicate.error?.issues), /duplicate/i);
});

test("memory.yaml's schema is one of them, and the defaults written out are what it gives an empty file", async () => {
  assert.deepEqual(MemoryFileSchema.parse({}), DEFAULT_MEMORY_CONFIG);
  await collect();
  assert.deepEqual(MemoryFileSchema.parse({}), DEFAULT_MEMORY_CONFIG);
  const inverted = MemoryFileSchema.safeParse({ long_term: { recall: { default_limit: 9, max_limit: 3 } } });
  assert.equal(inverted.success, false);
  assert.match(JSON.stringify(inverted.error?.issues), /larger than max_limit/);
});

test("appserver.yaml's schema is one of them: it parses and refuses the same after a collection", async () => {
  const file = { listen: "ws://127.0.0.1:9100", external_channels: { tg: { transport: "websocket" } } };
  const first = AppServerFileSchema.parse(file);
  await collect();
  assert.deepEqual(AppServerFileSchema.parse(file), first);
  const wrong = AppServerFileSchema.safeParse({ external_channels: { fs: { transport: "subprocess" } } });
  assert.equal(wrong.success, false);
  assert.match(JSON.stringify(wrong.error?.issues), /needs a command/);
});
