import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RpcError } from "@nexo/wire";
import { ScriptedHost } from "./helpers/scripted-host.js";

const HOST_EVENT = {
  id: "01940000-0000-0000-0000-000000000001",
  timestamp: "2026-05-01T00:00:00Z",
  topic: "plugin.outbound.loopback.team_a",
  source: "agent.coordinator",
  session_id: "01940000-0000-0000-0000-000000000099",
};

describe("broker bridge and host services against a real SDK plugin", () => {
  let host: ScriptedHost;
  const recalls: unknown[] = [];
  const completions: unknown[] = [];

  before(async () => {
    host = new ScriptedHost("demo-plugin.ts");
    host.peer.onRequest("memory.recall", (params) => {
      recalls.push(params);
      return { entries: [{ id: "m1", agent_id: "agent_a", content: "prefers short answers" }] };
    });
    host.peer.onRequest("llm.complete", async (params, ctx) => {
      completions.push(params);
      const p = params as { stream?: boolean };
      if (p.stream) {
        await ctx.sendDelta("llm.complete.delta", { chunk: "Hel" });
        await ctx.sendDelta("llm.complete.delta", { chunk: "lo" });
        // A delta whose chunk is not a string is logged and dropped by the SDK.
        await ctx.sendDelta("llm.complete.delta", { chunk: 42 });
        return { finish_reason: "stop", usage: { prompt_tokens: 4, completion_tokens: 2 } };
      }
      return { content: "Short.", finish_reason: "stop", usage: { prompt_tokens: 25, completion_tokens: 8 } };
    });
    await host.peer.request("initialize", { nexo_version: "0.1.5" });
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  async function deliver(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const before = host.published.length;
    await host.peer.notify("broker.event", {
      topic: "plugin.outbound.loopback",
      event: { ...HOST_EVENT, payload },
    });
    const published = await host.waitPublished(before + 1);
    const last = published[before];
    assert.ok(last);
    return last as unknown as Record<string, unknown>;
  }

  test("broker.event runs onEvent with params.topic and the event; broker.publish comes back", async () => {
    const publish = await deliver({ text: "hello" });
    assert.deepEqual(publish, {
      topic: "plugin.inbound.loopback",
      event: {
        topic: "plugin.inbound.loopback",
        source: "demo",
        payload: {
          topic: "plugin.outbound.loopback",
          echo: { text: "hello" },
          session_id: HOST_EVENT.session_id,
        },
        correlation_id: HOST_EVENT.id,
      },
    });
  });

  test("an event without topic or source is dropped with a log, and the next one is served", async () => {
    await host.peer.notify("broker.event", {
      topic: "plugin.outbound.loopback",
      event: { source: "x", payload: {} },
    });
    await host.stderrMatch(
      /notification dropped: params break the schema \{[^}]*"method":"broker\.event","detail":"event\.topic: /,
    );
    const publish = await deliver({ text: "after" });
    assert.deepEqual((publish.event as { payload: { echo: unknown } }).payload.echo, { text: "after" });
  });

  test("memory.recall: params as the contract sends them (limit always present), entries parsed", async () => {
    const publish = await deliver({ action: "recall", query: "tone" });
    assert.deepEqual(recalls.at(-1), { agent_id: "agent_a", query: "tone", limit: 10 });
    assert.deepEqual((publish.event as { payload: unknown }).payload, {
      entries: [
        {
          id: "m1",
          agent_id: "agent_a",
          content: "prefers short answers",
          tags: [],
          concept_tags: [],
          created_at: "",
          memory_type: null,
        },
      ],
    });
  });

  test("llm.complete (non-streaming): defaults sent, no `stream` key, result parsed", async () => {
    const publish = await deliver({ action: "complete", prompt: "summarize" });
    assert.deepEqual(completions.at(-1), {
      provider: "minimax",
      model: "m1",
      messages: [{ role: "user", content: "summarize" }],
      max_tokens: 4096,
      temperature: 0.7,
      system_prompt: "be brief",
    });
    assert.deepEqual((publish.event as { payload: unknown }).payload, {
      result: {
        content: "Short.",
        finish_reason: "stop",
        usage: { prompt_tokens: 25, completion_tokens: 8 },
      },
    });
  });

  test("llm.complete (streaming): chunks arrive in order, the final result has content null", async () => {
    const publish = await deliver({ action: "stream" });
    assert.equal((completions.at(-1) as { stream?: unknown }).stream, true);
    assert.deepEqual((publish.event as { payload: unknown }).payload, {
      chunks: ["Hel", "lo"],
      result: { content: null, finish_reason: "stop", usage: { prompt_tokens: 4, completion_tokens: 2 } },
    });
    await host.stderrMatch(/llm\.complete\.delta without a string chunk dropped/);
  });

  test("a host error reply reaches the plugin as RpcServerError with the host's code", async () => {
    host.peer.onRequest("llm.complete", () => {
      throw new RpcError(-32011, "no grant for provider minimax");
    });
    const publish = await deliver({ action: "complete", prompt: "x" });
    assert.deepEqual((publish.event as { payload: unknown }).payload, {
      error: "RpcServerError",
      message: "rpc error -32011: no grant for provider minimax",
      code: -32011,
    });
  });

  test("a streamed call failed by the host rejects stream.result", async () => {
    const publish = await deliver({ action: "stream" });
    assert.deepEqual((publish.event as { payload: unknown }).payload, {
      error: "RpcServerError",
      message: "rpc error -32011: no grant for provider minimax",
      code: -32011,
    });
  });

  test("publishing NaN is rejected in the plugin (WireError), nothing is sent", async () => {
    const publish = await deliver({ action: "nan" });
    assert.deepEqual((publish.event as { payload: unknown }).payload, {
      error: "WireError",
      message: "broker.publish params.event.payload.x is NaN, which JSON cannot represent",
      code: null,
    });
    assert.ok(!host.stdoutLines.some((line) => line.includes('"x":null')));
  });

  test("child request ids are integers 1, 2, 3, … from one counter", () => {
    const ids = host.stdoutLines
      .map((line) => JSON.parse(line) as { id?: unknown; method?: string })
      .filter((frame) => frame.method === "memory.recall" || frame.method === "llm.complete")
      .map((frame) => frame.id);
    assert.deepEqual(
      ids,
      ids.map((_, index) => index + 1),
    );
    assert.ok(ids.length >= 4);
  });
});
