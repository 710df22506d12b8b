import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { Dispatcher, JsonRpcPeer, RpcError } from "@nexo/wire";
import fc from "fast-check";
import type { MethodSchema } from "../src/schemas/jsonrpc.js";
import { pluginChildMethods, pluginMethods, ToolInvokeParamsSchema } from "../src/schemas/plugin/index.js";

const tables: Record<string, Record<string, MethodSchema>> = { pluginMethods, pluginChildMethods };

/** Values near the shape of each quick-checked method's params: the interesting side of the line. */
const nearToolInvoke = fc.record(
  {
    plugin_id: fc.oneof(fc.string(), fc.constant(null), fc.integer()),
    tool_name: fc.oneof(fc.string(), fc.constant(""), fc.integer(), fc.constant(null)),
    args: fc.anything(),
    agent_id: fc.oneof(fc.string(), fc.constant(null), fc.boolean()),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);

describe("quickParams", () => {
  test("tool.invoke has one (it is on the path of every tool call)", () => {
    assert.equal(typeof pluginMethods["tool.invoke"].quickParams, "function");
  });

  test("property: a value a quick check accepts is accepted by the schema, and parses to itself", () => {
    for (const [table, methods] of Object.entries(tables)) {
      for (const [method, entry] of Object.entries(methods)) {
        const quick = entry.quickParams;
        if (quick === undefined) continue;
        fc.assert(
          fc.property(fc.oneof(nearToolInvoke, fc.anything()), (value) => {
            if (!quick(value)) return;
            const parsed = entry.params.safeParse(value);
            assert.ok(parsed.success, `${table}.${method}: quick accepted what the schema refuses`);
            assert.deepStrictEqual(parsed.data, value);
          }),
          { numRuns: 2000 },
        );
      }
    }
  });

  test("property: tool.invoke's quick check recognises the params the host sends", () => {
    const quick = pluginMethods["tool.invoke"].quickParams!;
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string(),
        fc.jsonValue(),
        fc.option(fc.string(), { nil: null }),
        (toolName, pluginId, args, agentId) => {
          const params = { plugin_id: pluginId, tool_name: toolName, args, agent_id: agentId };
          assert.equal(quick(params), true);
          assert.ok(ToolInvokeParamsSchema.safeParse(params).success);
        },
      ),
    );
  });

  test("params the quick check does not recognise still get the schema's -32602", async () => {
    const a2b = new PassThrough();
    const b2a = new PassThrough();
    const host = JsonRpcPeer.overStreams({ input: b2a, output: a2b });
    const child = JsonRpcPeer.overStreams({ input: a2b, output: b2a });
    new Dispatcher(child, { requests: pluginMethods }).handle("tool.invoke", (p) => ({ got: p.tool_name }));
    assert.deepEqual(await host.request("tool.invoke", { tool_name: "t", args: { a: 1 } }), { got: "t" });
    await assert.rejects(
      host.request("tool.invoke", { plugin_id: "p", tool_name: "" }),
      (e: unknown) =>
        e instanceof RpcError &&
        e.code === -32602 &&
        /^invalid tool\.invoke params: .*tool_name/.test(e.message) &&
        e.data === undefined,
    );
    await assert.rejects(
      host.request("tool.invoke", { tool_name: "t", agent_id: 5 }),
      (e: unknown) => e instanceof RpcError && e.code === -32602 && /agent_id/.test(e.message),
    );
    host.close();
    child.close();
  });
});
