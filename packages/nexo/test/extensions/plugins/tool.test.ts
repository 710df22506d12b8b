/**
 * The tool wrapper against a real plugin process: advertised tools in the engine's ToolRegistry,
 * -33401..-33405 and -32601 as error outputs the model can read, the host's own argument check,
 * the timeout, and tools that keep working across a restart.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { JsonText } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import fc from "fast-check";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { ToolContext, ToolOutput } from "../../../src/engine/types.js";
import {
  PluginTool,
  registerPluginTools,
  toolInvokeParams,
  toolOutputOf,
} from "../../../src/extensions/plugins/tool.js";
import { cleanupHosts, nextReady, startHost as started } from "../../fixtures/plugins/harness.js";
import { recordingLogger } from "../../fixtures/processes.js";

afterEach(cleanupHosts);

describe("tool wrapper", () => {
  const context = (signal = new AbortController().signal): ToolContext => ({
    signal,
    sessionId: "s1",
    agentId: "ana",
    callId: "c1",
    workspace: "/tmp",
    unconfined: false,
  });

  it("registers every advertised tool and runs it through the engine's registry", async () => {
    const { host } = await started();
    const registry = new ToolRegistry();
    const remove = registerPluginTools(host, registry, recordingLogger());
    const names = registry.list().map((tool) => tool.name);
    assert.ok(names.includes("kitchen_echo"));
    assert.ok(!names.includes("kitchen_unlisted"), "only advertised tools are offered to the model");
    const tool = registry.get("kitchen_echo")!;
    assert.equal(tool.category, "exec");
    assert.equal(tool.source, "plugin");
    assert.deepEqual(await registry.invoke("kitchen_echo", { text: "hi" }, context()), {
      output: "echo: hi (agent ana, plugin kitchen)",
    });
    remove();
    assert.equal(registry.list().length, 0);
  });

  it("turns -33401..-33405 into error outputs the model can read, with code and data", async () => {
    const { host } = await started();
    const registry = new ToolRegistry();
    registerPluginTools(host, registry, recordingLogger());
    const fail = (code: number, data?: Record<string, unknown>) =>
      registry.invoke("kitchen_fail", { code, message: "nope", ...(data ? { data } : {}) }, context());

    const notFound = await fail(-33401);
    assert.equal(notFound.isError, true);
    assert.match(notFound.output, /kitchen_fail: tool not found \(-33401\): nope/);
    const invalid = await fail(-33402, { details: { field: "city" } });
    assert.match(invalid.output, /invalid arguments \(-33402\)[\s\S]*Offending fields: {"field":"city"}/);
    assert.deepEqual(invalid.metadata, { plugin_id: "kitchen", code: -33402, details: { field: "city" } });
    assert.match((await fail(-33403)).output, /execution failed \(-33403\)/);
    const unavailable = await fail(-33404, { retry_after_ms: 5_000 });
    assert.match(unavailable.output, /temporarily unavailable \(-33404\): nope\nRetry after 5000 ms\./);
    assert.equal(unavailable.metadata?.retry_after_ms, 5_000);
    assert.match((await fail(-33405)).output, /denied \(-33405\)/);
  });

  it("reports the host's own argument check and the timeout as error outputs", async () => {
    const { host } = await started({ NEXO_PLUGIN_TOOL_TIMEOUT_MS: "300" });
    const session = host.session!;
    const echo = new PluginTool(host, session.catalog.tools.get("kitchen_echo")!);
    const bad = await echo.execute({ text: 1 } as never, context());
    assert.equal(bad.isError, true);
    assert.deepEqual(bad.metadata?.details, [{ path: "/text", message: "must be string" }]);
    const slow = new PluginTool(host, session.catalog.tools.get("kitchen_slow")!);
    const timedOut = await slow.execute({ ms: 5_000 }, context());
    assert.match(timedOut.output, /no reply from plugin kitchen within 300 ms/);
    assert.equal(timedOut.metadata?.code, "timeout");
  });

  it("says so when the plugin does not implement tool.invoke (-32601)", async () => {
    const { host } = await started({}, { FIXTURE_UNIMPLEMENTED: "tool.invoke" });
    const echo = new PluginTool(host, host.session!.catalog.tools.get("kitchen_echo")!);
    const output = await echo.execute({ text: "x" }, context());
    assert.match(output.output, /the plugin does not implement tool.invoke \(-32601\)/);
  });

  it("keeps the registered tools working across a restart", async () => {
    const { host } = await started();
    const registry = new ToolRegistry();
    registerPluginTools(host, registry, recordingLogger());
    const ready = nextReady(host);
    const crashed = await registry.invoke("kitchen_crash", {}, context());
    assert.match(crashed.output, /stopped during the call/);
    await ready;
    assert.deepEqual(await registry.invoke("kitchen_echo", { text: "again" }, context()), {
      output: "echo: again (agent ana, plugin kitchen)",
    });
  });
});

describe("toolOutputOf", () => {
  /** The schema-only reading the hand-written fast path must agree with. */
  function bySchema(result: unknown): ToolOutput {
    const parsed = plugin.ToolResponseSchema.safeParse(result);
    if (!parsed.success) {
      return { output: typeof result === "string" ? result : (JSON.stringify(result, null, 2) ?? "null") };
    }
    return toolOutputOf(parsed.data);
  }

  it("reads every result exactly as the ToolResponse schema does", () => {
    const block = fc.oneof(
      fc.record(
        {
          type: fc.constantFrom("text", "image", "", "resource"),
          text: fc.option(fc.string(), { nil: undefined }),
        },
        { requiredKeys: ["type"] },
      ),
      fc.record({ type: fc.constant("image"), data: fc.string(), mimeType: fc.constantFrom("image/png", 3) }),
      fc.anything(),
    );
    const result = fc.oneof(
      fc.record(
        {
          content: fc.oneof(fc.array(block, { maxLength: 4 }), fc.anything()),
          is_error: fc.oneof(fc.boolean(), fc.anything()),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    );
    fc.assert(
      fc.property(result, (value) => assert.deepEqual(toolOutputOf(value), bySchema(value))),
      { numRuns: 500 },
    );
    assert.deepEqual(toolOutputOf({ content: [{ type: "text", text: "hi" }] }), { output: "hi" });
    assert.deepEqual(
      toolOutputOf({ content: [{ type: "text" }] }).output,
      '{\n  "content": [\n    {\n      "type": "text"\n    }\n  ]\n}',
    );
  });
});

describe("toolInvokeParams", () => {
  const objectForm = (args: unknown, agentId: string | null) => ({
    plugin_id: "bench",
    tool_name: "bench_echo",
    args,
    agent_id: agentId,
  });

  it("property: the text is what JSON.stringify gives for the params object, for any JSON arguments", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.option(fc.string(), { nil: null }),
        (pluginId, toolName, args, agentId) => {
          const params = toolInvokeParams(pluginId, toolName, args, agentId);
          const expected = JSON.stringify({
            plugin_id: pluginId,
            tool_name: toolName,
            args,
            agent_id: agentId,
          });
          if (params instanceof JsonText) assert.equal(params.json, expected);
          else assert.equal(JSON.stringify(params), expected);
        },
      ),
    );
  });

  it("alternating tools each get their own plugin id and name", () => {
    for (const [pluginId, toolName] of [
      ["a", "a_x"],
      ["b", 'b_"y"'],
      ["a", "a_x"],
    ] as const) {
      const params = toolInvokeParams(pluginId, toolName, { n: 1 }, "ana");
      assert.ok(params instanceof JsonText);
      assert.equal(
        params.json,
        JSON.stringify({ plugin_id: pluginId, tool_name: toolName, args: { n: 1 }, agent_id: "ana" }),
      );
    }
  });

  it("arguments with a long string, a toJSON of their own, or not an object stay an object", () => {
    const long = { content: "x".repeat(4096) };
    assert.deepEqual(toolInvokeParams("bench", "bench_echo", long, "ana"), objectForm(long, "ana"));
    const dated = { when: new Date(0), toJSON: (key: string) => ({ key }) };
    assert.deepEqual(toolInvokeParams("bench", "bench_echo", dated, null), objectForm(dated, null));
    for (const args of [undefined, null, "text", 3]) {
      assert.deepEqual(toolInvokeParams("bench", "bench_echo", args, null), objectForm(args, null));
    }
  });
});
