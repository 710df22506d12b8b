/**
 * The calling side of a method table: params and replies typed from the schemas, replies checked
 * (the other side is never trusted), outgoing params checked on request, streamed deltas checked.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { Caller, InvalidParamsError, JsonRpcPeer, MalformedReplyError } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";

function pair() {
  const a2b = new PassThrough();
  const b2a = new PassThrough();
  const host = JsonRpcPeer.overStreams({ input: b2a, output: a2b, name: "host" });
  const child = JsonRpcPeer.overStreams({ input: a2b, output: b2a, name: "child" });
  return { host, child };
}

describe("Caller", () => {
  test("the reply is parsed with the method's result schema; its type comes from the table", async () => {
    const { host, child } = pair();
    host.onRequest("memory.recall", () => ({ entries: [{ id: "m1", agent_id: "ana", content: "hi" }] }));
    const calls = new Caller(child, { requests: plugin.pluginChildMethods });
    const reply = await calls.request("memory.recall", { agent_id: "ana", query: "x" });
    // Defaults from MemoryEntrySchema are filled in for the caller.
    assert.deepEqual(reply.entries, [
      { id: "m1", agent_id: "ana", content: "hi", tags: [], concept_tags: [], memory_type: null },
    ]);
    const tags: string[] = reply.entries[0]!.tags;
    assert.deepEqual(tags, []);
    // @ts-expect-error: agent_id is required by MemoryRecallParamsSchema
    const typeOnly = () => calls.request("memory.recall", { query: "x" });
    void typeOnly;
    host.close();
  });

  test("a reply that breaks the schema rejects with MalformedReplyError, or the protocol's own error", async () => {
    const { host, child } = pair();
    host.onRequest("memory.recall", () => ({ entries: "none" }));
    const calls = new Caller(child, { requests: plugin.pluginChildMethods });
    await assert.rejects(
      calls.request("memory.recall", { agent_id: "ana", query: "x" }),
      (e: unknown) =>
        e instanceof MalformedReplyError &&
        e.method === "memory.recall" &&
        /^malformed memory\.recall reply: entries: /.test(e.message),
    );
    class ProtocolBroken extends Error {}
    const strict = new Caller(
      child,
      { requests: plugin.pluginChildMethods },
      { invalidReply: (m, detail) => new ProtocolBroken(`${m}: ${detail}`) },
    );
    await assert.rejects(strict.request("memory.recall", { agent_id: "ana", query: "x" }), ProtocolBroken);
    host.close();
  });

  test("checkParams refuses bad outgoing params before anything is sent", async () => {
    const { host, child } = pair();
    let sent = 0;
    host.onRequest("memory.recall", () => {
      sent += 1;
      return { entries: [] };
    });
    const calls = new Caller(child, { requests: plugin.pluginChildMethods }, { checkParams: true });
    const outside: unknown = { agent_id: "", query: "x" };
    await assert.rejects(
      calls.request("memory.recall", outside as plugin.MemoryRecallParamsInput),
      (e: unknown) => e instanceof InvalidParamsError && /agent_id/.test(e.message),
    );
    assert.equal(sent, 0);
    host.close();
  });

  test("a tool's result is any JSON: not walked, returned as sent", async () => {
    const { host, child } = pair();
    child.onRequest("tool.invoke", () => [1, "two", { three: 3 }]);
    const calls = new Caller(host, { requests: plugin.pluginMethods });
    assert.deepEqual(await calls.request("tool.invoke", { tool_name: "x_echo", args: {} }), [
      1,
      "two",
      { three: 3 },
    ]);
    host.close();
  });

  test("streamed deltas are typed and checked; a malformed delta fails and cancels the call", async () => {
    const { host, child } = pair();
    let step = 0;
    child.onRequest("llm.chat", async (_params, ctx) => {
      step += 1;
      await ctx.sendDelta("llm.chat.delta", { chunk: { type: "text_delta", delta: "he" } });
      if (step === 2) await ctx.sendDelta("llm.chat.delta", { chunk: 42 });
      await new Promise((r) => setTimeout(r, 20));
      return {
        content: { type: "text", text: "hello" },
        usage: { prompt_tokens: 1, completion_tokens: 1 },
        finish_reason: { kind: "stop" },
      };
    });
    const calls = new Caller(host, {
      requests: plugin.pluginMethods,
      notifications: plugin.pluginNotifications,
    });
    const params: plugin.LlmChatParamsInput = {
      provider: "p",
      model: "m",
      stream: true,
      request: { model: "m", messages: [], max_tokens: 16, temperature: 0 },
    };
    const chunks: unknown[] = [];
    const reply = await calls.requestStream("llm.chat", params, {
      deltaMethod: "llm.chat.delta",
      onDelta: (delta) => chunks.push(delta.chunk),
    });
    assert.equal(reply.finish_reason.kind, "stop");
    assert.deepEqual(chunks, [{ type: "text_delta", delta: "he" }]);
    await assert.rejects(
      calls.requestStream("llm.chat", params, { deltaMethod: "llm.chat.delta", onDelta: () => {} }),
      (e: unknown) => e instanceof MalformedReplyError && e.method === "llm.chat.delta",
    );
    assert.equal(host.pendingRequests, 0);
    host.close();
  });

  test("notify sends a notification of the table, typed by its schema", async () => {
    const { host, child } = pair();
    const seen: unknown[] = [];
    child.onNotification("broker.event", (params) => {
      seen.push(params);
    });
    const calls = new Caller(host, {
      requests: plugin.pluginMethods,
      notifications: plugin.pluginNotifications,
    });
    const event = { topic: "plugin.outbound.x", source: "s", payload: {} };
    await calls.notify("broker.event", { topic: "plugin.outbound.x", event });
    // @ts-expect-error: broker.event needs an event
    const typeOnly = () => calls.notify("broker.event", { topic: "t" });
    void typeOnly;
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen, [{ topic: "plugin.outbound.x", event }]);
    host.close();
  });
});
