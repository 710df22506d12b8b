import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parse as parseToml } from "smol-toml";
import type { z } from "zod";
import {
  JsonRpcErrorResponseSchema,
  JsonRpcNotificationSchema,
  JsonRpcRequestSchema,
  JsonRpcSuccessSchema,
} from "../src/schemas/jsonrpc.js";
import {
  BrokerEventParamsSchema,
  ChannelFeaturesAdvertSchema,
  ChannelSendOutboundParamsSchema,
  describeManifestIssues,
  HookResponseSchema,
  InitializeParamsSchema,
  InitializeResultSchema,
  LlmChatDeltaParamsSchema,
  LlmCompleteParamsSchema,
  LlmCompleteResultSchema,
  MEMORY_RECALL_DEFAULT_LIMIT,
  MemoryRecallParamsSchema,
  MemoryRecallResultSchema,
  type PluginChildMethodParams,
  PluginManifestSchema,
  type PluginMethodResult,
  type PluginNotificationParams,
  pluginChildMethods,
  pluginErrorData,
  pluginMethods,
  pluginNotifications,
  RemoteToolDefSchema,
  SANDBOX_DENYLIST_HOST_PATHS,
  SANDBOX_STATE_DIR_TOKEN,
  ShutdownParamsSchema,
  sandboxDenylistHit,
  ToolInvokeParamsSchema,
  ToolResponseSchema,
  VERSION_REQUIREMENT_PATTERN,
  VectorSearchParamsSchema,
} from "../src/schemas/plugin/index.js";

type Frame = Record<string, unknown>;
const requests: Record<string, { params: z.ZodType; result: z.ZodType }> = {
  ...pluginMethods,
  ...pluginChildMethods,
};
const notifications: Record<string, { params: z.ZodType }> = pluginNotifications;

/** Validates a request frame: the envelope, then the params against the method's schema. */
function checkRequest(frame: Frame): unknown {
  const envelope = JsonRpcRequestSchema.parse(frame);
  const schema = requests[envelope.method];
  assert.ok(schema, `no schema for request ${envelope.method}`);
  return schema.params.parse(envelope.params);
}

/** Validates a success reply against the result schema of the request it answers. */
function checkResult(method: string, frame: Frame): unknown {
  const envelope = JsonRpcSuccessSchema.parse(frame);
  const schema = requests[method];
  assert.ok(schema, `no schema for request ${method}`);
  return schema.result.parse(envelope.result);
}

function checkNotification(frame: Frame): unknown {
  const envelope = JsonRpcNotificationSchema.parse(frame);
  assert.equal("id" in frame, false, "a notification has no id");
  const schema = notifications[envelope.method];
  assert.ok(schema, `no schema for notification ${envelope.method}`);
  return schema.params.parse(envelope.params);
}

/** Validates an error reply and, when the contract types its code's data, the data too. */
function checkError(frame: Frame): void {
  const envelope = JsonRpcErrorResponseSchema.parse(frame);
  const dataSchema = (pluginErrorData as Record<number, z.ZodType>)[envelope.error.code];
  assert.ok(dataSchema, `no data schema for code ${envelope.error.code}`);
  dataSchema.parse(envelope.error.data);
}

/** Issue paths of a failed parse, dotted (`messages.0.role`). */
function issuePaths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, "expected the value to be rejected");
  return result.error!.issues.map((issue) => issue.path.map(String).join("."));
}

// The spec's examples, transcribed. Where the spec elides members with `...`, real-looking extra
// members stand in, which doubles as a pass-through check.

describe("plugin contract examples: lifecycle (§4)", () => {
  test("initialize request and reply", () => {
    assert.deepEqual(
      checkRequest({ jsonrpc: "2.0", id: 1, method: "initialize", params: { nexo_version: "0.1.5" } }),
      { nexo_version: "0.1.5" },
    );
    checkResult("initialize", {
      jsonrpc: "2.0",
      id: 1,
      result: {
        manifest: { plugin: { id: "slack", version: "0.2.0", name: "Slack Channel" } },
        server_version: "slack-0.2.0",
      },
    });
  });

  test("initialize reply with the §4.1.1 tool catalog", () => {
    const result = checkResult("initialize", {
      jsonrpc: "2.0",
      id: 1,
      result: {
        manifest: { plugin: { id: "browser", version: "0.1.1" } },
        server_version: "browser-0.1.1",
        tools: [
          {
            name: "browser_navigate",
            description: "Navigate to a URL",
            input_schema: {
              type: "object",
              properties: { url: { type: "string" } },
              required: ["url"],
            },
          },
        ],
      },
    }) as z.infer<typeof InitializeResultSchema>;
    assert.equal(result.tools?.[0]?.name, "browser_navigate");
    assert.deepEqual(result.tools?.[0]?.input_schema?.required, ["url"]);
  });

  test("the conformance kit's param-less initialize and shutdown are accepted", () => {
    assert.deepEqual(checkRequest({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }), {});
    assert.deepEqual(checkRequest({ jsonrpc: "2.0", id: 99, method: "shutdown" }), {});
    assert.deepEqual(ShutdownParamsSchema.parse(null), {});
  });

  test("shutdown request and reply", () => {
    assert.deepEqual(
      checkRequest({ jsonrpc: "2.0", id: 2, method: "shutdown", params: { reason: "host requested" } }),
      { reason: "host requested" },
    );
    assert.deepEqual(checkResult("shutdown", { jsonrpc: "2.0", id: 2, result: { ok: true } }), { ok: true });
  });
});

describe("plugin contract examples: broker bridge and host services (§5.1–§5.4)", () => {
  test("broker.event", () => {
    const params = checkNotification({
      jsonrpc: "2.0",
      method: "broker.event",
      params: {
        topic: "plugin.outbound.slack.team_a",
        event: {
          id: "01940000-0000-0000-0000-000000000001",
          timestamp: "2026-05-01T00:00:00Z",
          topic: "plugin.outbound.slack.team_a",
          source: "agent.coordinator",
          session_id: "01940000-0000-0000-0000-000000000099",
          payload: { text: "hello", thread_ts: "1700000000.0001" },
        },
      },
    }) as z.infer<typeof BrokerEventParamsSchema>;
    assert.deepEqual(params.event.payload, { text: "hello", thread_ts: "1700000000.0001" });
  });

  test("broker.publish, with the host's null session_id and with the SDKs' slimmer event", () => {
    checkNotification({
      jsonrpc: "2.0",
      method: "broker.publish",
      params: {
        topic: "plugin.inbound.slack.team_a",
        event: {
          id: "01940000-0000-0000-0000-000000000002",
          timestamp: "2026-05-01T00:01:00Z",
          topic: "plugin.inbound.slack.team_a",
          source: "slack",
          session_id: null,
          payload: { from: "U01ABC", text: "hi", channel: "C01" },
        },
      },
    });
    checkNotification({
      jsonrpc: "2.0",
      method: "broker.publish",
      params: {
        topic: "plugin.inbound.conf",
        event: { topic: "plugin.inbound.conf", source: "confplugin", payload: { event_seen: "v1" } },
      },
    });
  });

  test("memory.recall request and reply", () => {
    assert.deepEqual(
      checkRequest({
        jsonrpc: "2.0",
        id: 42,
        method: "memory.recall",
        params: { agent_id: "ventas_v1", query: "user prefers concise answers", limit: 5 },
      }),
      { agent_id: "ventas_v1", query: "user prefers concise answers", limit: 5 },
    );
    const result = checkResult("memory.recall", {
      jsonrpc: "2.0",
      id: 42,
      result: {
        entries: [
          {
            id: "01940000-0000-0000-0000-000000000001",
            agent_id: "ventas_v1",
            content: "user prefers concise answers",
            tags: ["preference"],
            concept_tags: [],
            created_at: "2026-04-30T18:22:31Z",
            memory_type: null,
          },
        ],
      },
    }) as z.infer<typeof MemoryRecallResultSchema>;
    assert.deepEqual(result.entries[0]?.tags, ["preference"]);
  });

  test("llm.complete request and reply", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 50,
      method: "llm.complete",
      params: {
        provider: "minimax",
        model: "minimax-m2.5",
        messages: [{ role: "user", content: "summarize this in one line: ..." }],
        max_tokens: 1024,
        temperature: 0.7,
        system_prompt: "You answer concisely.",
      },
    });
    checkResult("llm.complete", {
      jsonrpc: "2.0",
      id: 50,
      result: {
        content: "Concise reply text.",
        finish_reason: "stop",
        usage: { prompt_tokens: 25, completion_tokens: 8 },
      },
    });
  });

  test("llm.complete streaming: deltas and a final reply without content", () => {
    for (const chunk of ["hello", " world"]) {
      assert.deepEqual(
        checkNotification({
          jsonrpc: "2.0",
          method: "llm.complete.delta",
          params: { request_id: 50, chunk },
        }),
        { request_id: 50, chunk },
      );
    }
    const final = checkResult("llm.complete", {
      jsonrpc: "2.0",
      id: 50,
      result: { finish_reason: "stop", usage: { prompt_tokens: 12, completion_tokens: 7 } },
    }) as z.infer<typeof LlmCompleteResultSchema>;
    assert.equal(final.content, undefined);
  });
});

describe("plugin contract examples: extension methods (§5.x, §5.y, §5.z, §5.w, §5.t)", () => {
  test("channel.start / channel.stop / channel.send_outbound", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 42,
      method: "channel.start",
      params: { kind: "slack", instance: "primary" },
    });
    checkRequest({
      jsonrpc: "2.0",
      id: 42,
      method: "channel.start",
      params: { kind: "slack", instance: null },
    });
    checkResult("channel.start", { jsonrpc: "2.0", id: 42, result: { ok: true } });
    checkRequest({ jsonrpc: "2.0", id: 43, method: "channel.stop", params: { kind: "slack" } });
    checkResult("channel.stop", { jsonrpc: "2.0", id: 43, result: { ok: true } });
    checkRequest({
      jsonrpc: "2.0",
      id: 44,
      method: "channel.send_outbound",
      params: { kind: "slack", msg: { kind: "text", to: "U123", body: "hi" } },
    });
    checkResult("channel.send_outbound", {
      jsonrpc: "2.0",
      id: 44,
      result: { message_id: "1234.5678", sent_at_unix: 1741032000 },
    });
    checkError({
      jsonrpc: "2.0",
      id: 44,
      error: { code: -33004, message: "rate limited", data: { retry_after_secs: 42 } },
    });
  });

  test("llm.chat, sync", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 50,
      method: "llm.chat",
      params: {
        provider: "cohere",
        model: "command-r",
        stream: false,
        request: {
          model: "command-r",
          messages: [{ role: "user", content: "hi" }],
          max_tokens: 1024,
          temperature: 0.7,
        },
      },
    });
    checkResult("llm.chat", {
      jsonrpc: "2.0",
      id: 50,
      result: {
        content: { type: "text", text: "Hello world" },
        usage: { prompt_tokens: 12, completion_tokens: 4 },
        finish_reason: { kind: "stop" },
      },
    });
    checkError({
      jsonrpc: "2.0",
      id: 50,
      error: { code: -33103, message: "rate limited", data: { retry_after_secs: 30 } },
    });
  });

  test("llm.chat result variants: tool calls, other finish, cache usage", () => {
    checkResult("llm.chat", {
      jsonrpc: "2.0",
      id: 50,
      result: {
        content: {
          type: "tool_calls",
          tool_calls: [{ id: "call_1", name: "weather", arguments: { city: "Lima" } }],
        },
        usage: { prompt_tokens: 12, completion_tokens: 4 },
        finish_reason: { kind: "other", reason: "content_filter" },
        cache_usage: {
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 0,
          input_tokens: 12,
          output_tokens: 4,
        },
      },
    });
  });

  test("llm.chat, the full request schema", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 52,
      method: "llm.chat",
      params: {
        provider: "cohere",
        model: "command-r",
        stream: true,
        request: {
          model: "command-r",
          messages: [
            { role: "user", content: "weather?", attachments: [] },
            {
              role: "assistant",
              content: "",
              tool_calls: [{ id: "c1", name: "weather", arguments: { city: "Lima" } }],
            },
            { role: "tool", content: "sunny", tool_call_id: "c1", name: "weather" },
            {
              role: "user",
              content: "and this?",
              attachments: [
                { kind: "image", mime_type: "image/png", data_kind: "url", url: "https://x/y.png" },
              ],
            },
          ],
          tools: [{ name: "weather", description: "Weather", parameters: { type: "object" } }],
          max_tokens: 1024,
          temperature: 0.2,
          system_prompt: "Be brief.",
          stop_sequences: ["\n\n"],
          tool_choice: { kind: "specific", name: "weather" },
          system_blocks: [{ text: "You are a bot.", cache: "ephemeral1h" }],
          cache_tools: true,
        },
      },
    });
  });

  test("llm.chat streaming: every chunk type, then the final reply", () => {
    const chunks = [
      { type: "text_delta", delta: "Hello" },
      { type: "text_delta", delta: " world" },
      { type: "tool_call_start", id: "c1", name: "weather" },
      { type: "tool_call_args_delta", id: "c1", delta: '{"city":' },
      { type: "tool_call_end", id: "c1" },
      { type: "usage", usage: { prompt_tokens: 12, completion_tokens: 4 } },
      { type: "end", finish_reason: { kind: "stop" } },
    ];
    for (const chunk of chunks) {
      checkNotification({ jsonrpc: "2.0", method: "llm.chat.delta", params: { request_id: 51, chunk } });
    }
    checkResult("llm.chat", {
      jsonrpc: "2.0",
      id: 51,
      result: {
        content: { type: "text", text: "" },
        usage: { prompt_tokens: 12, completion_tokens: 4 },
        finish_reason: { kind: "stop" },
      },
    });
  });

  test("hook.on_hook request and its three replies", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 60,
      method: "hook.on_hook",
      params: {
        plugin_id: "compliance_plugin",
        hook_name: "before_message",
        event: { sender: "alice", body: "ping" },
      },
    });
    assert.deepEqual(
      checkResult("hook.on_hook", {
        jsonrpc: "2.0",
        id: 60,
        result: { abort: true, reason: "PII detected", decision: "block" },
      }),
      { abort: true, reason: "PII detected", decision: "block", do_not_reply_again: false },
    );
    checkResult("hook.on_hook", {
      jsonrpc: "2.0",
      id: 60,
      result: { abort: false, decision: "transform", transformed_body: "[REDACTED]" },
    });
    assert.deepEqual(checkResult("hook.on_hook", { jsonrpc: "2.0", id: 60, result: {} }), {
      abort: false,
      do_not_reply_again: false,
    });
  });

  test("memory.vector_upsert / _search / _delete", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 70,
      method: "memory.vector_upsert",
      params: {
        backend: "pinecone",
        collection: "kb",
        records: [{ id: "r1", content: "hello", embedding: [0.1, 0.2, 0.3], metadata: { source: "kb" } }],
      },
    });
    checkResult("memory.vector_upsert", { jsonrpc: "2.0", id: 70, result: { count: 1 } });
    checkRequest({
      jsonrpc: "2.0",
      id: 71,
      method: "memory.vector_search",
      params: {
        backend: "pinecone",
        collection: "kb",
        query: { embedding: [0.1, 0.2, 0.3], limit: 10, filter: { namespace: "tenant-1" } },
      },
    });
    checkResult("memory.vector_search", {
      jsonrpc: "2.0",
      id: 71,
      result: { matches: [{ id: "r1", content: "hello", score: 0.97, metadata: { source: "kb" } }] },
    });
    checkRequest({
      jsonrpc: "2.0",
      id: 72,
      method: "memory.vector_delete",
      params: { backend: "pinecone", collection: "kb", ids: ["r1", "r2"] },
    });
    checkResult("memory.vector_delete", { jsonrpc: "2.0", id: 72, result: { count: 2 } });
    checkError({
      jsonrpc: "2.0",
      id: 70,
      error: { code: -33302, message: "dimension mismatch", data: { expected: 768, got: 2 } },
    });
  });

  test("tool.invoke request and conventional reply", () => {
    checkRequest({
      jsonrpc: "2.0",
      id: 80,
      method: "tool.invoke",
      params: {
        plugin_id: "browser",
        tool_name: "browser_navigate",
        args: { url: "https://example.com" },
        agent_id: "shopper",
      },
    });
    const result = checkResult("tool.invoke", {
      jsonrpc: "2.0",
      id: 80,
      result: { content: [{ type: "text", text: "Navigated to https://example.com" }], is_error: false },
    });
    assert.equal(ToolResponseSchema.parse(result).is_error, false);
    // Any JSON value is a valid tool result.
    checkResult("tool.invoke", { jsonrpc: "2.0", id: 81, result: 42 });
    checkError({
      jsonrpc: "2.0",
      id: 80,
      error: { code: -33404, message: "unavailable: busy", data: { retry_after_ms: 5000 } },
    });
    checkError({
      jsonrpc: "2.0",
      id: 80,
      error: { code: -33402, message: "invalid argument: city", data: { details: { field: "city" } } },
    });
  });
});

describe("plugin schemas: defaults and pass-through", () => {
  test("memory.recall limit defaults to 10", () => {
    assert.equal(
      MemoryRecallParamsSchema.parse({ agent_id: "a", query: "q" }).limit,
      MEMORY_RECALL_DEFAULT_LIMIT,
    );
    assert.equal(MEMORY_RECALL_DEFAULT_LIMIT, 10);
  });

  test("llm.complete defaults max_tokens 4096 and temperature 0.7", () => {
    const params = LlmCompleteParamsSchema.parse({
      provider: "p",
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(params.max_tokens, 4096);
    assert.equal(params.temperature, 0.7);
    assert.equal("stream" in params, false);
  });

  test("memory entries fill the list fields the way the TypeScript SDK does", () => {
    const entry = MemoryRecallResultSchema.parse({ entries: [{ id: "1", agent_id: "a", content: "c" }] })
      .entries[0];
    assert.deepEqual(entry, {
      id: "1",
      agent_id: "a",
      content: "c",
      tags: [],
      concept_tags: [],
      memory_type: null,
    });
  });

  test("a tool definition without input_schema is accepted and its absence stays visible (the host warns)", () => {
    assert.equal(RemoteToolDefSchema.parse({ name: "x_y", description: "d" }).input_schema, undefined);
  });

  test("unknown fields survive at every level", () => {
    const invoke = ToolInvokeParamsSchema.parse({ tool_name: "t_x", args: null, trace_id: "abc" });
    assert.equal((invoke as Record<string, unknown>).trace_id, "abc");

    const event = BrokerEventParamsSchema.parse({
      topic: "t",
      future: 1,
      event: { topic: "t", source: "s", payload: { a: 1 }, priority: "now" },
    });
    assert.equal((event as Record<string, unknown>).future, 1);
    assert.equal((event.event as Record<string, unknown>).priority, "now");

    const recall = MemoryRecallResultSchema.parse({
      entries: [{ id: "1", agent_id: "a", content: "c", score: 0.5 }],
      next_cursor: "x",
    });
    assert.equal((recall as Record<string, unknown>).next_cursor, "x");
    assert.equal((recall.entries[0] as Record<string, unknown>).score, 0.5);

    const hook = HookResponseSchema.parse({ decision: "allow", audit: { rule: 7 } });
    assert.deepEqual((hook as Record<string, unknown>).audit, { rule: 7 });

    const delta = LlmChatDeltaParamsSchema.parse({
      request_id: 1,
      chunk: { type: "text_delta", delta: "x", index: 0 },
    });
    assert.equal((delta.chunk as Record<string, unknown>).index, 0);

    const outbound = ChannelSendOutboundParamsSchema.parse({
      kind: "discord",
      msg: { kind: "custom", embed: { title: "t" } },
    });
    assert.deepEqual((outbound.msg as Record<string, unknown>).embed, { title: "t" });
  });

  test("a missing broker payload reads as {}", () => {
    const params = BrokerEventParamsSchema.parse({ topic: "t", event: { topic: "t", source: "s" } });
    assert.deepEqual(params.event.payload, {});
  });
});

describe("plugin schemas: invalid messages name the offending field", () => {
  test("tool.invoke without tool_name", () => {
    assert.deepEqual(issuePaths(ToolInvokeParamsSchema, { plugin_id: "p", args: {} }), ["tool_name"]);
  });

  test("llm.complete with no messages, or a message with an unknown role", () => {
    const base = { provider: "p", model: "m" };
    assert.deepEqual(issuePaths(LlmCompleteParamsSchema, { ...base, messages: [] }), ["messages"]);
    assert.deepEqual(
      issuePaths(LlmCompleteParamsSchema, { ...base, messages: [{ role: "robot", content: "x" }] }),
      ["messages.0.role"],
    );
    assert.deepEqual(issuePaths(LlmCompleteParamsSchema, { ...base, messages: "hi" }), ["messages"]);
  });

  test("llm.complete finish_reason is a closed set plus other:<reason>", () => {
    const usage = { prompt_tokens: 1, completion_tokens: 1 };
    assert.deepEqual(issuePaths(LlmCompleteResultSchema, { finish_reason: "done", usage }), [
      "finish_reason",
    ]);
    assert.equal(
      LlmCompleteResultSchema.safeParse({ finish_reason: "other:content_filter", usage }).success,
      true,
    );
    assert.deepEqual(issuePaths(LlmCompleteResultSchema, { finish_reason: "stop" }), ["usage"]);
  });

  test("llm.chat.delta rejects unknown chunk types and incomplete chunks", () => {
    assert.deepEqual(issuePaths(LlmChatDeltaParamsSchema, { request_id: 1, chunk: { type: "thinking" } }), [
      "chunk.type",
    ]);
    assert.deepEqual(
      issuePaths(LlmChatDeltaParamsSchema, { request_id: 1, chunk: { type: "tool_call_start", id: "c1" } }),
      ["chunk.name"],
    );
    assert.deepEqual(
      issuePaths(LlmChatDeltaParamsSchema, {
        request_id: 1,
        chunk: { type: "end", finish_reason: { kind: "done" } },
      }),
      ["chunk.finish_reason.kind"],
    );
  });

  test("hook decisions are allow / block / transform", () => {
    assert.deepEqual(issuePaths(HookResponseSchema, { decision: "maybe" }), ["decision"]);
    assert.deepEqual(issuePaths(HookResponseSchema, { abort: "yes" }), ["abort"]);
  });

  test("channel.send_outbound message kinds are closed", () => {
    assert.deepEqual(
      issuePaths(ChannelSendOutboundParamsSchema, { kind: "slack", msg: { kind: "sticker" } }),
      ["msg.kind"],
    );
    assert.deepEqual(
      issuePaths(ChannelSendOutboundParamsSchema, { kind: "slack", msg: { kind: "text", to: "U1" } }),
      ["msg.body"],
    );
  });

  test("vector search needs a non-empty embedding and a positive limit", () => {
    const base = { backend: "b", collection: "c" };
    assert.deepEqual(issuePaths(VectorSearchParamsSchema, { ...base, query: { embedding: [], limit: 5 } }), [
      "query.embedding",
    ]);
    assert.deepEqual(issuePaths(VectorSearchParamsSchema, { ...base, query: { embedding: [1], limit: 0 } }), [
      "query.limit",
    ]);
  });

  test("broker events need a topic and a source", () => {
    assert.deepEqual(issuePaths(BrokerEventParamsSchema, { topic: "t", event: { topic: "t", source: "" } }), [
      "event.source",
    ]);
  });

  test("memory.recall rejects a negative or fractional limit", () => {
    assert.deepEqual(issuePaths(MemoryRecallParamsSchema, { agent_id: "a", query: "q", limit: -1 }), [
      "limit",
    ]);
    assert.deepEqual(issuePaths(MemoryRecallParamsSchema, { agent_id: "a", query: "q", limit: 1.5 }), [
      "limit",
    ]);
  });

  test("initialize reply: missing manifest id and duplicate tool names", () => {
    assert.deepEqual(issuePaths(InitializeResultSchema, { manifest: { plugin: {} }, server_version: "x" }), [
      "manifest.plugin.id",
    ]);
    const tool = { name: "x_a", description: "", input_schema: {} };
    assert.deepEqual(
      issuePaths(InitializeResultSchema, {
        manifest: { plugin: { id: "x" } },
        server_version: "v",
        tools: [tool, tool],
      }),
      ["tools.1.name"],
    );
  });

  test("a text block of a tool result needs its text", () => {
    assert.deepEqual(issuePaths(ToolResponseSchema, { content: [{ type: "text" }] }), ["content.0.text"]);
    assert.equal(ToolResponseSchema.safeParse({ content: [{ type: "image", data: "…" }] }).success, true);
  });
});

describe("plugin method tables", () => {
  test("the table helper types are the schemas' output types", () => {
    const recall: PluginChildMethodParams<"memory.recall"> = MemoryRecallParamsSchema.parse({
      agent_id: "a",
      query: "q",
    });
    const hook: PluginMethodResult<"hook.on_hook"> = pluginMethods["hook.on_hook"].result.parse({});
    const delta: PluginNotificationParams<"llm.complete.delta"> = { request_id: 7, chunk: "x" };
    assert.equal(recall.limit, 10);
    assert.equal(hook.abort, false);
    assert.deepEqual(pluginNotifications["llm.complete.delta"].params.parse(delta), delta);
  });

  test("every contract method and notification has exactly one entry", () => {
    assert.deepEqual(Object.keys(pluginMethods).sort(), [
      // nexo's optional channel features (sent only to plugins that advertise them)
      "channel.bots.list",
      "channel.bots.send",
      "channel.credentials.persist",
      "channel.credentials.probe",
      "channel.credentials.validate",
      "channel.pairing.cancel",
      "channel.pairing.start",
      "channel.send_outbound",
      "channel.start",
      "channel.stop",
      "hook.on_hook",
      "initialize",
      "llm.chat",
      "memory.vector_delete",
      "memory.vector_search",
      "memory.vector_upsert",
      "shutdown",
      "tool.invoke",
    ]);
    // broker.publish_acked is nexo's acknowledged publish (the one addition to the child's requests).
    assert.deepEqual(Object.keys(pluginChildMethods).sort(), [
      "broker.publish_acked",
      "llm.complete",
      "memory.recall",
    ]);
    assert.deepEqual(Object.keys(pluginNotifications).sort(), [
      "broker.event",
      "broker.publish",
      "channel.pairing.update",
      "channel.reply.delta",
      "llm.chat.delta",
      "llm.complete.delta",
    ]);
  });

  test("channel.reply.delta: a piece of a reply for one recipient and turn; reply_stream is a known feature", () => {
    const frame = {
      jsonrpc: "2.0",
      method: "channel.reply.delta",
      params: { kind: "webchat", instance: null, to: "visitor-1", turn_id: "t1", text: "Hello " },
    };
    assert.deepEqual(checkNotification(frame), frame.params);
    assert.throws(() => checkNotification({ ...frame, params: { ...frame.params, to: "" } }));
    assert.throws(() => checkNotification({ ...frame, params: { kind: "webchat", to: "v", text: "x" } }));
    assert.deepEqual(ChannelFeaturesAdvertSchema.parse(["reply_stream", "telepathy", "pairing"]), [
      "reply_stream",
      "pairing",
    ]);
  });

  test("host_features in the initialize params: optional, unknown names and non-arrays dropped", () => {
    assert.equal(InitializeParamsSchema.parse({ nexo_version: "1" }).host_features, undefined);
    assert.deepEqual(
      InitializeParamsSchema.parse({ host_features: ["teleport", "broker.publish_acked", 7] }).host_features,
      ["broker.publish_acked"],
    );
    assert.deepEqual(
      InitializeParamsSchema.parse({ host_features: "broker.publish_acked" }).host_features,
      [],
    );
  });

  test("broker.publish_acked: the publish params, an {event_id, durable, duplicate} result, typed refusals", () => {
    const request = {
      jsonrpc: "2.0",
      id: 4,
      method: "broker.publish_acked",
      params: { topic: "plugin.inbound.wa", event: { topic: "plugin.inbound.wa", source: "wa" } },
    };
    assert.deepEqual(checkRequest(request), {
      ...request.params,
      event: { ...request.params.event, payload: {} },
    });
    checkResult("broker.publish_acked", {
      jsonrpc: "2.0",
      id: 4,
      result: { event_id: "0190a6f0-0000-7000-8000-000000000000", durable: true, duplicate: false },
    });
    assert.throws(() =>
      checkResult("broker.publish_acked", { jsonrpc: "2.0", id: 4, result: { durable: true } }),
    );
    checkError({
      jsonrpc: "2.0",
      id: 4,
      error: {
        code: -32014,
        message: "the inbox is full",
        data: { reason: "inbox_full", retry_after_secs: 1 },
      },
    });
    assert.throws(() =>
      checkError({ jsonrpc: "2.0", id: 4, error: { code: -32013, message: "no", data: { reason: "nope" } } }),
    );
  });

  test("channel_features in the initialize reply: optional, unknown names dropped", () => {
    const base = { manifest: { plugin: { id: "wa" } }, server_version: "wa-1" };
    assert.equal(InitializeResultSchema.parse(base).channel_features, undefined);
    assert.deepEqual(
      InitializeResultSchema.parse({ ...base, channel_features: ["pairing", "teleport", "bots"] })
        .channel_features,
      ["pairing", "bots"],
    );
  });
});

// --- manifest (§2) -------------------------------------------------------------------------------

const PLUGIN_HEADER = `
[plugin]
id = "slack"
version = "0.2.0"
name = "Slack Channel"
description = "Slack channel plugin"
min_nexo_version = ">=0.1.0"
`;

/** The §2 example (its `description = "..."` kept verbatim). */
const SPEC_MANIFEST = `
[plugin]
id = "slack"                       # ASCII slug, ^[a-z][a-z0-9_]{0,31}$
version = "0.2.0"                  # semver
name = "Slack Channel"
description = "..."
min_nexo_version = ">=0.1.0"

[plugin.requires]
nexo_capabilities = ["broker"]

# Phase 81.14 — subprocess entrypoint.
[plugin.entrypoint]
command = "/usr/local/bin/plugin-slack"  # absolute path or PATH binary
args = ["--mode", "stdio"]               # optional
env = { "RUST_LOG" = "info" }            # optional, MUST NOT begin with "NEXO_"

[[plugin.channels.register]]
kind = "slack"
adapter = "SlackChannelAdapter"
`;

const SPEC_EXTENDS = `${PLUGIN_HEADER}
[plugin.extends]
channels         = ["slack", "discord"]    # paired with Phase 81.24 wrapper
llm_providers    = ["cohere", "mistral"]   # paired with Phase 81.25
memory_backends  = ["pinecone", "qdrant"]  # paired with Phase 81.26
hooks            = ["pii_redact"]          # paired with Phase 81.27
`;

const SPEC_SANDBOX = `${PLUGIN_HEADER}
[plugin.sandbox]
enabled = true                        # default false (opt-in)
network = "deny"                       # "deny" | "host"
fs_read_paths = ["/etc/ssl/certs"]    # absolute, ro-bind into sandbox
fs_write_paths = ["\${state_dir}"]     # absolute, rw-bind.
drop_user = true
`;

/** The §9.5 tool plugin. */
const SPEC_TOOLS = `
[plugin]
id = "myplugin"
version = "0.1.0"
name = "My plugin"
description = "Weather tools"
min_nexo_version = ">=0.1.0"

[plugin.extends]
tools = ["myplugin_weather"]
`;

function manifestProblems(toml: string): string[] {
  const result = PluginManifestSchema.safeParse(parseToml(toml));
  assert.equal(result.success, false, "expected the manifest to be rejected");
  return describeManifestIssues(result.error!);
}

function assertRejectedAt(toml: string, keyPath: string, messagePart?: string): void {
  const problems = manifestProblems(toml);
  const hit = problems.find((line) => line.startsWith(`${keyPath}: `));
  assert.ok(hit, `expected a problem at ${keyPath}, got:\n${problems.join("\n")}`);
  if (messagePart !== undefined)
    assert.ok(hit.includes(messagePart), `"${hit}" should mention "${messagePart}"`);
}

describe("manifest: the spec's examples parse", () => {
  test("§2 base manifest", () => {
    const manifest = PluginManifestSchema.parse(parseToml(SPEC_MANIFEST));
    assert.equal(manifest.plugin.id, "slack");
    assert.deepEqual(manifest.plugin.entrypoint?.env, { RUST_LOG: "info" });
    assert.equal(manifest.plugin.channels?.register?.[0]?.adapter, "SlackChannelAdapter");
    assert.deepEqual(manifest.plugin.requires?.nexo_capabilities, ["broker"]);
  });

  test("§2.1 extends, §2.2 sandbox and §9.5 tools", () => {
    assert.deepEqual(PluginManifestSchema.parse(parseToml(SPEC_EXTENDS)).plugin.extends?.hooks, [
      "pii_redact",
    ]);
    assert.deepEqual(PluginManifestSchema.parse(parseToml(SPEC_SANDBOX)).plugin.sandbox?.fs_write_paths, [
      SANDBOX_STATE_DIR_TOKEN,
    ]);
    assert.deepEqual(PluginManifestSchema.parse(parseToml(SPEC_TOOLS)).plugin.extends?.tools, [
      "myplugin_weather",
    ]);
  });

  test("defaults are not injected and unknown sections pass through", () => {
    const manifest = PluginManifestSchema.parse(
      parseToml(`manifest_version = 2
${PLUGIN_HEADER}
enabled_by_default = false
[plugin.tools]
expose = ["slack_post"]
[plugin.supervisor]
respawn = true
`),
    ) as Record<string, unknown> & z.infer<typeof PluginManifestSchema>;
    assert.equal(manifest.manifest_version, 2);
    // smol-toml builds null-prototype tables; compare their members.
    assert.deepEqual(
      { ...((manifest.plugin as Record<string, object>).tools ?? {}) },
      { expose: ["slack_post"] },
    );
    assert.deepEqual(manifest.plugin.supervisor, { respawn: true });
    assert.equal(manifest.plugin.sandbox, undefined);
  });

  test("ext_<id>_ tool names satisfy the namespace rule", () => {
    const toml = SPEC_TOOLS.replace('["myplugin_weather"]', '["ext_myplugin_lookup"]');
    assert.equal(PluginManifestSchema.safeParse(parseToml(toml)).success, true);
  });

  test("a disabled sandbox's paths are not checked", () => {
    const toml = `${PLUGIN_HEADER}
[plugin.sandbox]
enabled = false
fs_read_paths = ["relative/path", "/root"]
`;
    assert.equal(PluginManifestSchema.safeParse(parseToml(toml)).success, true);
  });
});

describe("manifest: broken manifests fail at their key path", () => {
  test("[plugin] fields", () => {
    assertRejectedAt('title = "no plugin table"', "plugin");
    assertRejectedAt(
      PLUGIN_HEADER.replace('id = "slack"', 'id = "Slack"'),
      "plugin.id",
      "^[a-z][a-z0-9_]{0,31}$",
    );
    assertRejectedAt(PLUGIN_HEADER.replace('id = "slack"', `id = "${"a".repeat(33)}"`), "plugin.id");
    assertRejectedAt(PLUGIN_HEADER.replace('version = "0.2.0"', 'version = "0.2"'), "plugin.version");
    assertRejectedAt(PLUGIN_HEADER.replace('name = "Slack Channel"', 'name = "  "'), "plugin.name", "blank");
    assertRejectedAt(PLUGIN_HEADER.replace('">=0.1.0"', '"latest"'), "plugin.min_nexo_version");
  });

  test("entrypoint env keys may not begin with NEXO_", () => {
    assertRejectedAt(
      SPEC_MANIFEST.replace('"RUST_LOG" = "info"', '"NEXO_HOME" = "/tmp"'),
      "plugin.entrypoint.env.NEXO_HOME",
      "reserved",
    );
    assertRejectedAt(`${PLUGIN_HEADER}\n[plugin.entrypoint]\ncommand = ""\n`, "plugin.entrypoint.command");
  });

  test("channel registrations: slug kinds, no duplicates", () => {
    assertRejectedAt(
      SPEC_MANIFEST.replace('kind = "slack"', 'kind = "slack.>"'),
      "plugin.channels.register[0].kind",
    );
    const twice = `${SPEC_MANIFEST}\n[[plugin.channels.register]]\nkind = "slack"\nadapter = "Other"\n`;
    assertRejectedAt(twice, "plugin.channels.register[1].kind", "more than once");
  });

  test("[plugin.extends] is closed and its ids are unique across lists", () => {
    assertRejectedAt(`${SPEC_EXTENDS}widgets = ["x"]\n`, "plugin.extends.widgets", "only accepts");
    assertRejectedAt(
      SPEC_EXTENDS.replace('["pii_redact"]', '["pii_redact", "pii_redact"]'),
      "plugin.extends.hooks[1]",
    );
    assertRejectedAt(
      SPEC_EXTENDS.replace('["pii_redact"]', '["cohere"]'),
      "plugin.extends.hooks[0]",
      "already declared in llm_providers",
    );
    assertRejectedAt(SPEC_EXTENDS.replace('"qdrant"', '"Qdrant"'), "plugin.extends.memory_backends[1]");
  });

  test("extends.tools must live in the plugin's namespace", () => {
    assertRejectedAt(
      SPEC_TOOLS.replace('["myplugin_weather"]', '["weather"]'),
      "plugin.extends.tools[0]",
      "myplugin_* or ext_myplugin_*",
    );
  });

  test("[plugin.sandbox] rejects unknown keys, relative paths and the denylist", () => {
    const sandbox = (lines: string) => `${PLUGIN_HEADER}\n[plugin.sandbox]\nenabled = true\n${lines}\n`;
    assertRejectedAt(
      sandbox('network_allowlist = ["api.slack.com:443"]'),
      "plugin.sandbox.network_allowlist",
    );
    assertRejectedAt(sandbox('network = "allowlist"'), "plugin.sandbox.network");
    assertRejectedAt(sandbox('fs_read_paths = ["etc/ssl"]'), "plugin.sandbox.fs_read_paths[0]", "absolute");
    assertRejectedAt(sandbox('fs_read_paths = ["/etc"]'), "plugin.sandbox.fs_read_paths[0]", "/etc/shadow");
    assertRejectedAt(
      sandbox('fs_write_paths = ["/tmp/../root/.ssh"]'),
      "plugin.sandbox.fs_write_paths[0]",
      "/root",
    );
    assertRejectedAt(
      sandbox(`fs_read_paths = ["${SANDBOX_STATE_DIR_TOKEN}"]`),
      "plugin.sandbox.fs_read_paths[0]",
      "fs_write_paths",
    );
    assertRejectedAt(
      sandbox(`fs_write_paths = ["/data/${SANDBOX_STATE_DIR_TOKEN}"]`),
      "plugin.sandbox.fs_write_paths[0]",
    );
    assertRejectedAt(
      sandbox(`fs_write_paths = ["${SANDBOX_STATE_DIR_TOKEN}/../../x"]`),
      "plugin.sandbox.fs_write_paths[0]",
    );
    assert.equal(
      PluginManifestSchema.safeParse(
        parseToml(sandbox(`fs_write_paths = ["${SANDBOX_STATE_DIR_TOKEN}/cache", "/var/tmp/x"]`)),
      ).success,
      true,
    );
  });

  test("[plugin.supervisor] bounds", () => {
    const supervisor = (lines: string) => `${PLUGIN_HEADER}\n[plugin.supervisor]\n${lines}\n`;
    assertRejectedAt(supervisor("stderr_tail_lines = 1000"), "plugin.supervisor.stderr_tail_lines");
    assertRejectedAt(supervisor("respawn = true\nbackoff_ms = 10"), "plugin.supervisor.backoff_ms");
    assertRejectedAt(supervisor("respawn = true\nmax_attempts = 0"), "plugin.supervisor.max_attempts");
    // With respawn off the knobs are inert.
    assert.equal(PluginManifestSchema.safeParse(parseToml(supervisor("backoff_ms = 10"))).success, true);
  });

  test("every problem is reported, not only the first", () => {
    const problems = manifestProblems(
      PLUGIN_HEADER.replace('"0.2.0"', '"two"').replace('name = "Slack Channel"', 'name = ""'),
    );
    assert.deepEqual(
      problems.map((line) => line.split(":")[0]),
      ["plugin.version", "plugin.name"],
    );
  });
});

describe("manifest helpers", () => {
  test("sandbox denylist matching", () => {
    assert.equal(sandboxDenylistHit("/"), SANDBOX_DENYLIST_HOST_PATHS[0]);
    assert.equal(sandboxDenylistHit("/etc/ssl/certs"), undefined);
    assert.equal(sandboxDenylistHit("/etc/shadow_backup"), undefined);
    assert.equal(sandboxDenylistHit("/etc//shadow/"), "/etc/shadow");
    assert.equal(sandboxDenylistHit("/etc/sudoers.d/rule"), "/etc/sudoers.d");
    assert.equal(sandboxDenylistHit("/var/run"), "/var/run/docker.sock");
    assert.equal(sandboxDenylistHit("/var/run/user/1000"), undefined);
  });

  test("version requirements", () => {
    for (const ok of [">=0.1.0", "^0.1", "~1.2.3", "0.3.*", ">=0.1.0, <0.3", "*", "=1.0.0-rc.1", "1"]) {
      assert.ok(VERSION_REQUIREMENT_PATTERN.test(ok), ok);
    }
    for (const bad of ["latest", ">=", "0.1.0.0", ">=0.1.0,", "v1.0.0", ""]) {
      assert.equal(VERSION_REQUIREMENT_PATTERN.test(bad), false, bad);
    }
  });
});
