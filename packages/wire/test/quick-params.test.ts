import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import {
  Caller,
  Dispatcher,
  JsonRpcPeer,
  MalformedReplyError,
  type RequestSender,
  RpcError,
} from "@nexo/wire";
import fc from "fast-check";
import type { MethodSchema } from "../src/schemas/jsonrpc.js";
import {
  MicroappToolCallParamsSchema,
  MicroappToolCallResultSchema,
  microappMethods,
} from "../src/schemas/microapp/methods.js";
import { pluginChildMethods, pluginMethods, ToolInvokeParamsSchema } from "../src/schemas/plugin/index.js";

const tables: Record<string, Record<string, MethodSchema>> = {
  pluginMethods,
  pluginChildMethods,
  microappMethods,
};

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

/** A string that is sometimes empty, sometimes not a string at all. */
const nearName = fc.oneof(
  fc.string(),
  fc.constant(""),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
);
/** A count (`int().nonnegative()`) and the values around it. */
const nearCount = fc.oneof(
  fc.nat(),
  fc.integer(),
  fc.double(),
  fc.constant(2 ** 60),
  fc.constant(-0),
  fc.constant("3"),
  fc.constant(undefined),
);
/**
 * An object as JSON.parse makes it, or one with an own `__proto__` key (JSON.parse makes those
 * too), or one without a prototype. No symbol keys: the checks judge decoded JSON.
 */
function nearObject<T>(fields: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fields },
    fields.map((value) => Object.assign(JSON.parse('{"__proto__":{"x":1}}'), value)),
    fields.map((value) => Object.assign(Object.create(null), value)),
    fc.constant([]),
    fc.constant(null),
  );
}
/** tools/call params as the daemon sends them, as they arrive (serialized, then parsed). */
const name = fc.string({ minLength: 1 });
const validToolCall = fc
  .record(
    {
      tool: name,
      args: fc.dictionary(fc.string(), fc.jsonValue()),
      binding_context: fc.record(
        { agent_id: name, channel: name, account_id: name, binding_id: name, binding_index: fc.nat() },
        { requiredKeys: ["agent_id"] },
      ),
      inbound: fc.record(
        { kind: name, from: fc.string(), ts_ms: fc.nat(), session_id: name },
        { requiredKeys: ["kind"] },
      ),
    },
    { requiredKeys: ["tool", "args", "binding_context"] },
  )
  .map((params) => JSON.parse(JSON.stringify(params)) as Record<string, unknown>)
  // An own `__proto__` key in args (fc.dictionary may make one) is for the schema to drop.
  .filter((params) => !Object.hasOwn(params.args as object, "__proto__"));
/** Where one field of valid params is replaced by a value near the line. */
const toolCallPaths = [
  [],
  ["tool"],
  ["args"],
  ["binding_context"],
  ["binding_context", "agent_id"],
  ["binding_context", "channel"],
  ["binding_context", "account_id"],
  ["binding_context", "binding_id"],
  ["binding_context", "binding_index"],
  ["inbound"],
  ["inbound", "kind"],
  ["inbound", "from"],
  ["inbound", "ts_ms"],
  ["inbound", "session_id"],
  ["extra"],
] as const;
const nearValue = fc.oneof(
  nearName,
  nearCount,
  nearObject(fc.dictionary(fc.string(), fc.jsonValue())),
  fc.jsonValue(),
);
/** Valid params with one field (or the whole object, or a nested one's prototype) changed. */
const nearToolCall = fc
  .tuple(
    validToolCall,
    fc.constantFrom(...toolCallPaths),
    nearValue,
    fc.constantFrom("value", "proto", "bare"),
  )
  .map(([params, path, value, how]) => {
    let parent: Record<string, unknown> = params;
    for (const key of path.slice(0, -1)) {
      const next = parent[key];
      if (typeof next !== "object" || next === null) return params;
      parent = next as Record<string, unknown>;
    }
    const key = path.at(-1);
    if (key === undefined) return how === "value" ? value : reshaped(params, how);
    const current = parent[key];
    parent[key] =
      how !== "value" && typeof current === "object" && current !== null
        ? reshaped(current as Record<string, unknown>, how)
        : value;
    return params;
  });

/** The same fields with an own `__proto__` key added, or on an object without a prototype. */
function reshaped(value: Record<string, unknown>, how: "proto" | "bare"): unknown {
  const base = how === "proto" ? JSON.parse('{"__proto__":{"x":1}}') : Object.create(null);
  return Object.assign(base, value);
}
const nearToolCallResult = nearObject(
  fc.record(
    { output: fc.oneof(fc.jsonValue(), fc.constant(undefined)), error: nearName, extra: fc.jsonValue() },
    { requiredKeys: [] },
  ),
);

describe("quickParams", () => {
  test("tool.invoke and tools/call have one (they are on the path of every tool call)", () => {
    assert.equal(typeof pluginMethods["tool.invoke"].quickParams, "function");
    assert.equal(typeof microappMethods["tools/call"].quickParams, "function");
    assert.equal(typeof microappMethods["tools/call"].quickResult, "function");
  });

  test("property: a value a quick check accepts is accepted by the schema, and parses to itself", () => {
    for (const [table, methods] of Object.entries(tables)) {
      for (const [method, entry] of Object.entries(methods)) {
        const quick = entry.quickParams;
        if (quick === undefined) continue;
        fc.assert(
          fc.property(fc.oneof(nearToolInvoke, nearToolCall, fc.anything()), (value) => {
            if (!quick(value)) return;
            const parsed = entry.params.safeParse(value);
            assert.ok(parsed.success, `${table}.${method}: quick accepted what the schema refuses`);
            assert.deepStrictEqual(parsed.data, value);
          }),
          { numRuns: 5000 },
        );
      }
    }
  });

  test("property: a value a quickResult check accepts is accepted by the schema, and parses to itself", () => {
    for (const [table, methods] of Object.entries(tables)) {
      for (const [method, entry] of Object.entries(methods)) {
        const quick = entry.quickResult;
        if (quick === undefined) continue;
        fc.assert(
          fc.property(fc.oneof(nearToolCallResult, fc.anything()), (value) => {
            if (!quick(value)) return;
            const parsed = entry.result.safeParse(value);
            assert.ok(parsed.success, `${table}.${method}: quickResult accepted what the schema refuses`);
            assert.deepStrictEqual(parsed.data, value);
          }),
          { numRuns: 2000 },
        );
      }
    }
  });

  test("property: tools/call's quick checks recognise what the daemon and the SDK send", () => {
    const entry = microappMethods["tools/call"];
    fc.assert(
      fc.property(validToolCall, (params) => {
        assert.equal(entry.quickParams!(params), true, JSON.stringify(params));
        assert.ok(MicroappToolCallParamsSchema.safeParse(params).success);
      }),
    );
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), fc.boolean(), (output, error, failed) => {
        const result = JSON.parse(JSON.stringify(failed ? { error } : { output }));
        assert.equal(entry.quickResult!(result), true, JSON.stringify(result));
        assert.ok(MicroappToolCallResultSchema.safeParse(result).success);
      }),
    );
  });

  test("a tools/call reply the quick check does not recognise still gets the schema's verdict", async () => {
    const replies: unknown[] = [];
    const sender: RequestSender = {
      request: async <R>() => replies.shift() as R,
      requestStream: async <R>() => undefined as R,
    };
    const calls = new Caller(sender, { requests: microappMethods });
    const params = { tool: "a_b", args: {}, binding_context: { agent_id: "ana" } };
    const recognised = { output: { x: 1 } };
    replies.push(recognised);
    assert.equal(await calls.request("tools/call", params), recognised, "passed on as received");
    // Not a plain object (so not the quick path), but what the schema accepts: its parse comes back.
    replies.push(Object.assign(Object.create(null), { error: "no" }));
    assert.deepEqual({ ...(await calls.request("tools/call", params)) }, { error: "no" });
    for (const bad of [{ output: 1, error: "both" }, {}, { error: 5 }, null]) {
      replies.push(bad);
      await assert.rejects(
        calls.request("tools/call", params),
        (e: unknown) => e instanceof MalformedReplyError && /^malformed tools\/call reply: /.test(e.message),
      );
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
