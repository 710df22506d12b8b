/**
 * Lazily built schemas (schemas/lazy.ts): importing the protocol modules builds (almost) none of them, a use
 * builds what it touches and no other group, and a lazy schema validates, composes, reports its
 * options and converts to JSON Schema exactly as the schema it stands for.
 * The first test must stay first: it looks at what the imports alone built.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { types } from "node:util";
import { z } from "zod";
import "../src/schemas/index.js";
import * as jsonstream from "../src/schemas/jsonstream.js";
import { builtSchemaGroups, lazySchema } from "../src/schemas/lazy.js";

test("importing every protocol's schemas builds none of json-stream's or the plugin protocol's and no AppServer thread, turn or notification", () => {
  assert.deepEqual(
    [...builtSchemaGroups()].filter(
      (group) => group.startsWith("jsonstream.") || group.startsWith("plugin."),
    ),
    [],
  );
  // A few modules read another schema at import (an open union lists its members' tags); these
  // groups are read by none.
  for (const group of [
    "appserver.threads",
    "appserver.turns",
    "appserver.notifications",
    "admin.agents",
    "admin.memory",
    "microapp.manifest",
  ]) {
    assert.ok(!builtSchemaGroups().has(group), `${group} was built at import`);
  }
});

test("parsing a command builds the commands (and the sets they use), never the events", () => {
  const parsed = jsonstream.JsonStreamCommandSchema.safeParse({ type: "message", msg_id: "m1", input: "hi" });
  assert.equal(parsed.success, true);
  assert.deepEqual(parsed.data, { type: "message", msg_id: "m1", input: "hi", files: [] });
  const rejected = jsonstream.JsonStreamCommandSchema.safeParse({
    type: "tool_approve",
    call_id: "c",
    scope: "ever",
  });
  assert.equal(rejected.success, false);
  assert.deepEqual(
    rejected.error?.issues.map((issue) => issue.path.join(".")),
    ["scope"],
  );
  assert.ok(builtSchemaGroups().has("jsonstream.commands"));
  assert.ok(builtSchemaGroups().has("jsonstream.sets"));
  assert.ok(!builtSchemaGroups().has("jsonstream.events"));
  jsonstream.JsonStreamEventSchema.parse({ type: "pong" });
  assert.ok(builtSchemaGroups().has("jsonstream.events"));
});

test("a lazy schema is the schema it builds: validation, composition, options, JSON Schema", () => {
  const eager = () => z.looseObject({ id: z.string().min(2), mode: z.enum(["a", "b"]).default("a") });
  let builds = 0;
  const lazy = lazySchema("test.shape", () => {
    builds++;
    return eager();
  });
  assert.equal(builds, 0);
  assert.ok(!builtSchemaGroups().has("test.shape"));
  assert.ok(lazy instanceof z.ZodType);
  assert.equal(builds, 1);
  assert.ok(builtSchemaGroups().has("test.shape"));
  for (const value of [{ id: "ab" }, { id: "ab", mode: "b", extra: 1 }, { id: "a" }, { id: 3 }, null, "x"]) {
    assert.deepEqual(lazy.safeParse(value), eager().safeParse(value));
  }
  assert.deepEqual(z.toJSONSchema(lazy), z.toJSONSchema(eager()));
  const parent = z.object({ inner: lazy, list: z.array(lazy) });
  assert.deepEqual(parent.parse({ inner: { id: "xy" }, list: [{ id: "zz", mode: "b" }] }), {
    inner: { id: "xy", mode: "a" },
    list: [{ id: "zz", mode: "b" }],
  });
  assert.equal(parent.safeParse({ inner: { id: "x" }, list: [] }).success, false);
  const union = z.discriminatedUnion("type", [
    lazySchema("test.union", () => z.object({ type: z.literal("one"), n: z.number() })),
    lazySchema("test.union", () => z.object({ type: z.literal("two") })),
  ]);
  assert.deepEqual(union.parse({ type: "one", n: 1 }), { type: "one", n: 1 });
  assert.equal(union.safeParse({ type: "three" }).success, false);
  assert.equal(union.options.length, 2);
  const modes = lazySchema("test.enum", () => z.enum(["x", "y"]));
  assert.deepEqual(modes.options, ["x", "y"]);
  assert.equal(modes.default("x").parse(undefined), "x");
  assert.equal(builds, 1, "built once, whatever touched it");
});

test("once built, a lazy schema reads straight from the schema: no Proxy is left on the way", () => {
  const lazy = lazySchema("test.proto", () => z.object({ n: z.number() }));
  assert.ok(
    types.isProxy(Object.getPrototypeOf(lazy)),
    "before its first use the stand-in leads to the Proxy",
  );
  assert.equal(lazy.parse({ n: 1 }).n, 1);
  const schema = Object.getPrototypeOf(lazy) as object;
  assert.ok(!types.isProxy(schema), "the Proxy is still on the stand-in's prototype chain");
  assert.ok(schema instanceof z.ZodObject);
  assert.equal(lazy._zod, (schema as typeof lazy)._zod, "the stand-in reads the built schema's internals");
  // A method zod defines on its prototypes runs with the stand-in as `this`: the wrapper it makes
  // holds the stand-in, which parses as the schema.
  assert.deepEqual(lazy.optional().parse(undefined), undefined);
  assert.equal(lazy.array().safeParse([{ n: "x" }]).success, false);
});

test("a write or an `in` test is the first use too", () => {
  const written = lazySchema("test.write", () => z.string());
  (written as unknown as { note: string }).note = "kept";
  assert.equal((written as unknown as { note: string }).note, "kept");
  assert.ok(written.safeParse("x").success);
  const asked = lazySchema("test.in", () => z.string());
  assert.ok("safeParse" in asked);
  assert.ok(!types.isProxy(Object.getPrototypeOf(asked)));
});
