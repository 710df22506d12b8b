import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createEscalateTool } from "../../../src/engine/tools/escalate.js";
import {
  builtinTools,
  DEFAULT_MAX_OUTPUT_BYTES,
  DuplicateToolError,
  InvalidToolError,
  ToolArgumentsError,
  ToolRegistry,
  UnknownToolError,
} from "../../../src/engine/tools/index.js";
import { SchemaValidators } from "../../../src/engine/tools/schema-validator.js";
import { spawnTool } from "../../../src/engine/tools/spawn.js";
import { closeNames, editDistance } from "../../../src/engine/tools/suggest.js";
import type { Tool, ToolContext, ToolOutput, ToolSpec } from "../../../src/engine/types.js";
import { toolContext } from "../../helpers/tools.js";

const workspace = mkdtempSync(join(tmpdir(), "nexo-tools-registry-"));
after(() => rmSync(workspace, { recursive: true, force: true }));

function ctx(overrides: Partial<ToolContext> = {}): ToolContext {
  return toolContext(workspace, overrides);
}

function fakeTool(
  overrides: Partial<Tool> & { run?: (args: Record<string, unknown>) => Promise<ToolOutput> },
): Tool {
  const { run, ...rest } = overrides;
  return {
    name: "echo",
    description: "Echoes its text",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" }, times: { type: "integer", minimum: 1 } },
      required: ["text"],
      additionalProperties: false,
    },
    category: "info",
    source: "plugin",
    describe: (args) => `Echo ${String(args.text)}`,
    execute: run ?? (async (args) => ({ output: String(args.text) })),
    ...rest,
  };
}

describe("ToolRegistry registration", () => {
  it("registers, lists, gets and unregisters tools", () => {
    const registry = new ToolRegistry();
    registry.register(fakeTool({}));
    registry.register(fakeTool({ name: "other" }));
    assert.deepEqual(
      registry.list().map((tool) => tool.name),
      ["echo", "other"],
    );
    assert.equal(registry.get("echo")?.source, "plugin");
    assert.equal(registry.has("other"), true);
    assert.equal(registry.unregister("other"), true);
    assert.equal(registry.unregister("other"), false);
    assert.equal(registry.get("other"), undefined);
    // The name is free again once unregistered.
    registry.register(fakeTool({ name: "other", source: "mcp" }));
    assert.equal(registry.get("other")?.source, "mcp");
  });

  it("refuses a duplicate name and names both sources", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    assert.throws(
      () => registry.register(fakeTool({ name: "Read", source: "mcp" })),
      (error: unknown) =>
        error instanceof DuplicateToolError &&
        error.toolName === "Read" &&
        error.existingSource === "builtin" &&
        error.newSource === "mcp" &&
        /builtin/.test(error.message) &&
        /mcp/.test(error.message),
    );
    // The original stays in place.
    assert.equal(registry.get("Read")?.source, "builtin");
  });

  it("refuses an invalid schema at registration with ajv's reason", () => {
    const registry = new ToolRegistry();
    assert.throws(
      () =>
        registry.register(
          fakeTool({
            name: "broken",
            inputSchema: { type: "object", properties: { a: { type: "nonsense" } } },
          }),
        ),
      (error: unknown) =>
        error instanceof InvalidToolError &&
        /broken/.test(error.message) &&
        /schema is invalid/.test(error.message),
    );
    assert.equal(registry.has("broken"), false);
  });

  it("refuses non-object schemas and names providers would reject", () => {
    const registry = new ToolRegistry();
    assert.throws(() => registry.register(fakeTool({ inputSchema: { type: "string" } })), InvalidToolError);
    assert.throws(() => registry.register(fakeTool({ name: "has space" })), InvalidToolError);
    assert.throws(() => registry.register(fakeTool({ name: "x".repeat(65) })), InvalidToolError);
    assert.throws(
      () =>
        registry.register(
          fakeTool({ inputSchema: { $schema: "http://json-schema.org/draft-04/schema#", type: "object" } }),
        ),
      /unsupported JSON Schema dialect/,
    );
  });

  it("compiles 2020-12 schemas with the matching dialect", () => {
    const registry = new ToolRegistry();
    registry.register(
      fakeTool({
        name: "tuple",
        inputSchema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: {
            pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false },
          },
        },
      }),
    );
    assert.deepEqual(registry.validate("tuple", { pair: ["a", 1] }), { ok: true });
    const bad = registry.validate("tuple", { pair: ["a", 1, 2] });
    assert.equal(bad.ok, false);
  });

  it("holds every built-in schema against its meta-schema (at run time they skip that check)", () => {
    const tools = [
      ...builtinTools(),
      spawnTool({ createSession: () => assert.fail("not run") }),
      createEscalateTool(() => assert.fail("not run")),
    ];
    const validators = new SchemaValidators();
    for (const tool of tools) {
      assert.equal(tool.source, "builtin", tool.name);
      assert.doesNotThrow(() => validators.compileNow(tool.inputSchema), tool.name);
    }
  });

  it("validates a built-in's arguments on its first call, as registration would have", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const other = new ToolRegistry();
    other.registerAll(builtinTools());
    for (const r of [registry, other]) {
      const bad = r.validate("Read", { offset: 0 });
      assert.equal(bad.ok, false);
      assert.deepEqual(bad.ok ? [] : bad.issues.map((issue) => issue.path), ["/file_path", "/offset"]);
      assert.deepEqual(r.validate("Read", { file_path: "a.txt" }), { ok: true });
    }
  });

  it("describes the builtins as the spec maps their categories", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const categories = Object.fromEntries(registry.list().map((tool) => [tool.name, tool.category]));
    assert.deepEqual(categories, {
      Read: "info",
      Write: "edit",
      Edit: "edit",
      Bash: "exec",
      Glob: "info",
      Grep: "info",
      memory_store: "edit",
      memory_recall: "info",
    });
    assert.equal(registry.categoryOf("nope"), "exec");
    assert.equal(registry.describe("Read", { file_path: "src/main.rs" }), "Read src/main.rs");
    assert.equal(registry.describe("Bash", { command: "npm test" }), "Run: npm test");
    assert.equal(registry.describe("Write", { file_path: "a.txt" }), "Write to a.txt");
    assert.equal(registry.describe("nope", {}), "nope");
  });

  it("gives specs for all tools or a filtered set", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const specs = registry.specs();
    assert.equal(specs.length, 8);
    for (const spec of specs) {
      assert.equal(typeof spec.description, "string");
      assert.equal(spec.inputSchema.type, "object");
    }
    assert.deepEqual(
      registry.specs((tool) => tool.category === "info").map((spec) => spec.name),
      ["Read", "Glob", "Grep", "memory_recall"],
    );
  });

  it("hands out one frozen list of all specs until a tool comes or goes", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const first = registry.specs();
    assert.equal(registry.specs(), first, "asked again with no change: the same list");
    assert.ok(Object.isFrozen(first) && first.every((spec) => Object.isFrozen(spec)));
    assert.throws(() => (first as ToolSpec[]).push(first[0]!), TypeError);

    registry.register({ ...builtinTools()[0]!, name: "ReadAgain" });
    const grown = registry.specs();
    assert.notEqual(grown, first);
    assert.deepEqual(
      grown.map((spec) => spec.name),
      [...first.map((spec) => spec.name), "ReadAgain"],
    );
    assert.equal(first.length, 8, "a list handed out earlier does not change");

    registry.unregister("Read");
    assert.deepEqual(
      registry.specs().map((spec) => spec.name),
      grown.map((spec) => spec.name).filter((name) => name !== "Read"),
    );
  });
});

describe("ToolRegistry validation", () => {
  it("lists every offending field with its pointer", () => {
    const registry = new ToolRegistry();
    registry.register(fakeTool({}));
    const result = registry.validate("echo", { times: 0, extra: true });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.ok(result.error instanceof ToolArgumentsError);
    assert.deepEqual(
      [...result.issues].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: "/extra", message: "is not an allowed property" },
        { path: "/text", message: "is required" },
        { path: "/times", message: "must be >= 1" },
      ],
    );
    assert.match(result.error.message, /^Invalid arguments for echo: /);
    assert.match(result.error.message, /\/times must be >= 1/);
  });

  it("reports enum values and nested paths", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const grep = registry.validate("Grep", { pattern: "x", output_mode: "lines" });
    assert.equal(grep.ok, false);
    if (!grep.ok)
      assert.deepEqual(grep.issues, [{ path: "/output_mode", message: 'must be one of "files", "content"' }]);
    const store = registry.validate("memory_store", { content: "x", tags: ["ok", 3] });
    assert.equal(store.ok, false);
    if (!store.ok) assert.deepEqual(store.issues, [{ path: "/tags/1", message: "must be string" }]);
  });

  it("accepts valid arguments", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    assert.deepEqual(registry.validate("Read", { file_path: "a", offset: 2, limit: 3 }), { ok: true });
  });

  it("says an unknown tool does not exist and suggests close names", () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const result = registry.validate("read", {});
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.ok(result.error instanceof UnknownToolError);
    assert.deepEqual(result.error.suggestions, ["Read"]);
    assert.equal(result.error.message, 'Tool "read" does not exist. Did you mean: Read?');
  });
});

describe("ToolRegistry.invoke", () => {
  it("runs a valid call", async () => {
    const registry = new ToolRegistry();
    registry.register(fakeTool({}));
    assert.deepEqual(await registry.invoke("echo", { text: "hi" }, ctx()), { output: "hi" });
  });

  it("returns validation errors as error outputs without running the tool", async () => {
    let ran = false;
    const registry = new ToolRegistry();
    registry.register(
      fakeTool({
        run: async () => {
          ran = true;
          return { output: "ran" };
        },
      }),
    );
    const output = await registry.invoke("echo", { text: 5 }, ctx());
    assert.equal(output.isError, true);
    assert.equal(output.output, "Invalid arguments for echo: /text must be string");
    assert.equal(ran, false);
  });

  it("turns an unknown name into an error output listing close names", async () => {
    const registry = new ToolRegistry();
    registry.registerAll(builtinTools());
    const output = await registry.invoke("Grepp", { pattern: "x" }, ctx());
    assert.equal(output.isError, true);
    assert.match(output.output, /^Tool "Grepp" does not exist\. Did you mean: Grep/);
    const far = await registry.invoke("launch_rockets", {}, ctx());
    assert.equal(far.output, 'Tool "launch_rockets" does not exist.');
  });

  it("turns a thrown error into an error output", async () => {
    const registry = new ToolRegistry();
    registry.register(
      fakeTool({
        run: async () => {
          throw new Error("disk on fire");
        },
      }),
    );
    assert.deepEqual(await registry.invoke("echo", { text: "x" }, ctx()), {
      output: "echo failed: disk on fire",
      isError: true,
    });
  });

  it("rejects a result without text output", async () => {
    const registry = new ToolRegistry();
    registry.register(fakeTool({ run: async () => ({ output: 42 }) as unknown as ToolOutput }));
    const output = await registry.invoke("echo", { text: "x" }, ctx());
    assert.equal(output.isError, true);
    assert.match(output.output, /returned no text output/);
  });

  it("does not start a tool when the call is already cancelled", async () => {
    let ran = false;
    const registry = new ToolRegistry();
    registry.register(
      fakeTool({
        run: async () => {
          ran = true;
          return { output: "" };
        },
      }),
    );
    const controller = new AbortController();
    controller.abort();
    const output = await registry.invoke("echo", { text: "x" }, ctx({ signal: controller.signal }));
    assert.equal(output.isError, true);
    assert.equal(ran, false);
  });

  it("caps long text output with a marker saying how much was cut", async () => {
    const registry = new ToolRegistry({ maxOutputBytes: 100 });
    registry.register(fakeTool({ run: async () => ({ output: "x".repeat(250), metadata: { kept: true } }) }));
    const output = await registry.invoke("echo", { text: "x" }, ctx());
    assert.equal(output.output, `${"x".repeat(100)}\n[… output truncated: 150 of 250 bytes cut …]`);
    assert.deepEqual(output.metadata, { kept: true, truncated_bytes: 150 });
  });

  it("never cuts a multi-byte character in half", async () => {
    const registry = new ToolRegistry({ maxOutputBytes: 5 });
    registry.register(fakeTool({ run: async () => ({ output: "ééééé" }) })); // 10 bytes
    const output = await registry.invoke("echo", { text: "x" }, ctx());
    assert.equal(output.output, "éé\n[… output truncated: 6 of 10 bytes cut …]");
  });

  it("leaves images whole and has a 100 KB default cap", async () => {
    assert.equal(DEFAULT_MAX_OUTPUT_BYTES, 100 * 1024);
    const registry = new ToolRegistry();
    const big = "A".repeat(DEFAULT_MAX_OUTPUT_BYTES + 10);
    registry.register(fakeTool({ name: "img", run: async () => ({ output: big, outputType: "image" }) }));
    registry.register(fakeTool({ name: "txt", run: async () => ({ output: big }) }));
    assert.equal((await registry.invoke("img", { text: "x" }, ctx())).output, big);
    const text = await registry.invoke("txt", { text: "x" }, ctx());
    assert.ok(text.output.endsWith("[… output truncated: 10 of 102410 bytes cut …]"));
  });

  it("refuses a non-positive cap", () => {
    assert.throws(() => new ToolRegistry({ maxOutputBytes: 0 }), RangeError);
  });
});

describe("close name suggestions", () => {
  it("ranks case changes, substrings and small typos", () => {
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.deepEqual(closeNames("read_file", ["mcp__fs__read_file", "Read", "Bash"]), [
      "mcp__fs__read_file",
      "Read",
    ]);
    assert.deepEqual(closeNames("Blob", ["Glob", "Grep", "Bash"]), ["Glob"]);
    assert.deepEqual(closeNames("zzzzzz", ["Read"]), []);
  });
});
