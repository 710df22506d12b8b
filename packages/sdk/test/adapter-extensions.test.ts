import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRateLimitedError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  InternalError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
  MemoryCollectionNotFoundError,
  MemoryDimensionMismatchError,
  MemoryRateLimitedError,
  MemoryWriteFailedError,
  RpcError,
} from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { ScriptedHost } from "./helpers/scripted-host.js";

function rejectsWith<E extends RpcError>(
  cls: new (...args: never[]) => E,
  code: number,
  check?: (e: E) => void,
) {
  return (error: unknown) => {
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    assert.equal(error.code, code);
    check?.(error);
    return true;
  };
}

describe("channel, llm, hook and vector memory handlers against a real SDK plugin", () => {
  let host: ScriptedHost;
  before(async () => {
    host = new ScriptedHost("demo-plugin.ts");
    await host.peer.request("initialize", { nexo_version: "0.1.5" });
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  describe("channel.*", () => {
    test("start and stop answer {ok: true} (a handler returning nothing included)", async () => {
      assert.deepEqual(await host.peer.request("channel.start", { kind: "loopback", instance: null }), {
        ok: true,
      });
      assert.deepEqual(await host.peer.request("channel.start", { kind: "loopback" }), { ok: true });
      assert.deepEqual(await host.peer.request("channel.stop", { kind: "loopback" }), { ok: true });
    });

    test("send_outbound returns the delivery acknowledgement", async () => {
      const ack = await host.peer.request("channel.send_outbound", {
        kind: "loopback",
        msg: { kind: "text", to: "u1", body: "hi" },
      });
      assert.deepEqual(ack, { message_id: "m-u1", sent_at_unix: 1741032000 });
      assert.ok(plugin.ChannelSendOutboundResultSchema.safeParse(ack).success);
    });

    test("typed channel errors map to -33001..-33005 with their data", async () => {
      await assert.rejects(
        host.peer.request("channel.start", { kind: "loopback", instance: "broken" }),
        rejectsWith(ChannelConnectionError, -33001, (e) => assert.deepEqual(e.data, { attempt: 1 })),
      );
      const send = (to: string) =>
        host.peer.request("channel.send_outbound", {
          kind: "loopback",
          msg: { kind: "text", to, body: "x" },
        });
      await assert.rejects(send("auth"), rejectsWith(ChannelAuthenticationError, -33002));
      await assert.rejects(
        send("nobody"),
        rejectsWith(ChannelRecipientError, -33003, (e) => {
          assert.equal(e.recipient, "nobody");
          assert.equal(e.reason, "no such user");
        }),
      );
      await assert.rejects(
        send("flood"),
        rejectsWith(ChannelRateLimitedError, -33004, (e) => assert.equal(e.retryAfterSecs, 42)),
      );
      await assert.rejects(
        host.peer.request("channel.send_outbound", {
          kind: "loopback",
          msg: { kind: "media", to: "u1", url: "https://example.com/a.png" },
        }),
        rejectsWith(ChannelUnsupportedError, -33005, (e) => assert.equal(e.feature, "media")),
      );
    });

    test("a result that breaks the schema is -32603 naming the field, not sent as is", async () => {
      await assert.rejects(
        host.peer.request("channel.send_outbound", { kind: "loopback", msg: { kind: "custom", any: 1 } }),
        rejectsWith(InternalError, -32603, (e) => assert.match(e.message, /invalid result: message_id/)),
      );
    });

    test("params that break the schema are -32602", async () => {
      await assert.rejects(
        host.peer.request("channel.send_outbound", { kind: "loopback", msg: { kind: "fax" } }),
        (e: unknown) => e instanceof RpcError && e.code === -32602 && /msg/.test(e.message),
      );
    });
  });

  describe("llm.chat", () => {
    const request = {
      model: "command-r",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 1024,
      temperature: 0.7,
    };

    test("non-streaming returns the result", async () => {
      const result = await host.peer.request("llm.chat", {
        provider: "echo_llm",
        model: "command-r",
        stream: false,
        request,
      });
      assert.deepEqual(result, {
        content: { type: "text", text: "echo: hi" },
        usage: { prompt_tokens: 3, completion_tokens: 2 },
        finish_reason: { kind: "stop" },
      });
    });

    test("streaming sends every chunk type as llm.chat.delta before the final reply", async () => {
      const deltas: unknown[] = [];
      const result = await host.peer.requestStream(
        "llm.chat",
        { provider: "echo_llm", model: "command-r", stream: true, request },
        { deltaMethod: "llm.chat.delta", onDelta: (params) => deltas.push(params) },
      );
      for (const delta of deltas) assert.ok(plugin.LlmChatDeltaParamsSchema.safeParse(delta).success);
      const chunks = deltas.map((d) => (d as { chunk: { type: string } }).chunk);
      assert.deepEqual(chunks, [
        { type: "text_delta", delta: "Hel" },
        { type: "text_delta", delta: "lo" },
        { type: "tool_call_start", id: "c1", name: "lookup" },
        { type: "tool_call_args_delta", id: "c1", delta: '{"q":1}' },
        { type: "tool_call_end", id: "c1" },
        { type: "usage", usage: { prompt_tokens: 3, completion_tokens: 2 } },
        { type: "end", finish_reason: { kind: "stop" } },
      ]);
      const requestIds = new Set(deltas.map((d) => (d as { request_id: unknown }).request_id));
      assert.equal(requestIds.size, 1);
      // A stream's final reply may leave content out; the SDK sends the empty text content.
      assert.deepEqual(result, {
        usage: { prompt_tokens: 3, completion_tokens: 2 },
        finish_reason: { kind: "stop" },
        content: { type: "text", text: "" },
      });
    });

    test("typed LLM errors map to -3310x; a generic exception is -32603", async () => {
      const chat = (model: string) =>
        host.peer.request("llm.chat", {
          provider: "echo_llm",
          model,
          stream: false,
          request: { ...request, model },
        });
      await assert.rejects(chat("missing"), rejectsWith(LlmModelNotFoundError, -33104));
      await assert.rejects(
        chat("ratelimited"),
        rejectsWith(LlmRateLimitedError, -33103, (e) => assert.equal(e.retryAfterSecs, 30)),
      );
      await assert.rejects(
        chat("boom"),
        rejectsWith(InternalError, -32603, (e) => assert.equal(e.message, "provider exploded")),
      );
      await assert.rejects(
        chat("delta-without-stream"),
        rejectsWith(InternalError, -32603, (e) => assert.match(e.message, /only for streamed llm\.chat/)),
      );
    });
  });

  describe("hook.on_hook", () => {
    const fire = (body: string) =>
      host.peer.request("hook.on_hook", {
        plugin_id: "demo",
        hook_name: "before_message",
        event: { sender: "alice", body },
      });

    test("nothing returned answers {} (continue)", async () => {
      assert.deepEqual(await fire("ping"), {});
    });

    test("block and transform decisions pass through", async () => {
      assert.deepEqual(await fire("a forbidden word"), {
        abort: true,
        decision: "block",
        reason: "forbidden word",
      });
      assert.deepEqual(await fire("mail bob@example.com now"), {
        decision: "transform",
        transformed_body: "mail [REDACTED] now",
      });
    });
  });

  describe("memory.vector_*", () => {
    test("upsert, search and delete work end to end", async () => {
      const upsert = await host.peer.request("memory.vector_upsert", {
        backend: "mem_vec",
        collection: "kb",
        records: [
          { id: "r1", content: "hello", embedding: [1, 0, 0], metadata: { source: "kb" } },
          { id: "r2", content: "world", embedding: [0, 1, 0] },
        ],
      });
      assert.deepEqual(upsert, { count: 2 });
      const search = (await host.peer.request("memory.vector_search", {
        backend: "mem_vec",
        collection: "kb",
        query: { embedding: [0.9, 0.1, 0], limit: 1, filter: { namespace: "t1" } },
      })) as { matches: Array<{ id: string; score: number }> };
      assert.equal(search.matches.length, 1);
      assert.equal(search.matches[0]?.id, "r1");
      assert.ok((search.matches[0]?.score ?? 0) > 0.9);
      assert.deepEqual(
        await host.peer.request("memory.vector_delete", {
          backend: "mem_vec",
          collection: "kb",
          ids: ["r1", "zz"],
        }),
        { count: 1 },
      );
    });

    test("typed memory errors map to -33301..-33304 with their data", async () => {
      const upsert = (collection: string, embedding: number[]) =>
        host.peer.request("memory.vector_upsert", {
          backend: "mem_vec",
          collection,
          records: [{ id: "r", content: "c", embedding }],
        });
      await assert.rejects(
        upsert("missing", [1, 2, 3]),
        rejectsWith(MemoryCollectionNotFoundError, -33301, (e) => assert.equal(e.collection, "missing")),
      );
      await assert.rejects(
        upsert("kb", [1, 2]),
        rejectsWith(MemoryDimensionMismatchError, -33302, (e) => {
          assert.equal(e.expected, 3);
          assert.equal(e.got, 2);
        }),
      );
      await assert.rejects(
        host.peer.request("memory.vector_search", {
          backend: "mem_vec",
          collection: "busy",
          query: { embedding: [1, 0, 0], limit: 3 },
        }),
        rejectsWith(MemoryRateLimitedError, -33303, (e) => assert.equal(e.retryAfterSecs, 60)),
      );
      await assert.rejects(upsert("readonly", [1, 2, 3]), rejectsWith(MemoryWriteFailedError, -33304));
    });
  });
});

describe("a plugin without handlers", () => {
  let host: ScriptedHost;
  before(() => {
    host = new ScriptedHost("bare-plugin.ts");
  });
  after(async () => {
    await host.dispose();
  });

  test("initialize echoes the manifest and the configured server_version, without tools", async () => {
    const result = (await host.peer.request("initialize", {})) as Record<string, unknown>;
    assert.equal(result.server_version, "bare-custom-1");
    assert.equal("tools" in result, false);
    assert.deepEqual((result.manifest as { plugin: { id: string } }).plugin.id, "bare");
  });

  test("every unimplemented contract method answers -32601", async () => {
    const calls: Array<[string, unknown]> = [
      ["tool.invoke", { tool_name: "bare_x", args: {} }],
      ["channel.start", { kind: "k" }],
      ["channel.stop", { kind: "k" }],
      ["channel.send_outbound", { kind: "k", msg: { kind: "text", to: "a", body: "b" } }],
      [
        "llm.chat",
        { provider: "p", model: "m", request: { model: "m", messages: [], max_tokens: 1, temperature: 0 } },
      ],
      ["hook.on_hook", { plugin_id: "bare", hook_name: "h", event: {} }],
      ["memory.vector_upsert", { backend: "b", collection: "c", records: [] }],
      ["memory.vector_search", { backend: "b", collection: "c", query: { embedding: [1], limit: 1 } }],
      ["memory.vector_delete", { backend: "b", collection: "c", ids: [] }],
    ];
    for (const [method, params] of calls) {
      await assert.rejects(host.peer.request(method, params), (e: unknown) => {
        assert.ok(e instanceof RpcError);
        assert.equal(e.code, -32601, method);
        assert.equal(e.message, `method not found: ${method}`);
        return true;
      });
    }
  });
});
