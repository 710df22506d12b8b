/**
 * The Anthropic provider against the real mock LLM server over HTTP: what it streams back, and
 * what it sends (cache breakpoints, tool results, thinking signatures).
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import {
  LlmAuthenticationError,
  LlmContextOverflowError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
} from "@nexo/wire";
import { AnthropicProvider, anthropicBaseUrl } from "../../../src/engine/providers/anthropic.js";
import type { RetryClock, RetryPolicy } from "../../../src/engine/providers/retry.js";
import type { ChatMessage, ChatRequest, ProviderEvent } from "../../../src/engine/types.js";

const FAST: RetryPolicy = {
  maxRetries: 2,
  initialBackoffMs: 1,
  maxBackoffMs: 5,
  multiplier: 2,
  jitter: 0,
  maxRetryAfterMs: 60_000,
};
const noWait: RetryClock = { sleep: async () => {}, now: () => Date.now(), random: () => 0.5 };

async function collect(
  stream: AsyncIterable<ProviderEvent>,
): Promise<{ events: ProviderEvent[]; error?: unknown }> {
  const events: ProviderEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

const user = (text: string): ChatMessage => ({ role: "user", content: [{ type: "text", text }] });

const READ_TOOL = {
  name: "Read",
  description: "Read a file",
  inputSchema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
};
const GLOB_TOOL = {
  name: "Glob",
  description: "Find files",
  inputSchema: { type: "object", properties: { pattern: { type: "string" } } },
};

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "claude-mock-1", messages: [user("hello")], maxTokens: 256, ...overrides };
}

describe("Anthropic provider over the mock server", () => {
  const server = new MockLlmServer();
  let provider: AnthropicProvider;

  before(async () => {
    const url = await server.start();
    provider = new AnthropicProvider({ apiKey: "test-key", baseUrl: url, retry: FAST, clock: noWait });
  });
  after(() => server.close());
  beforeEach(() => server.reset({ responses: [] }));

  it("streams text in several deltas, then usage and the stop reason", async () => {
    // Paced, so the deltas reach nexo in separate reads (deltas of one read are joined: sse.test.ts).
    server.reset([{ text: "Hello there, how can I help you today?", delay_ms: 20 }]);
    const { events, error } = await collect(provider.stream(request()));
    assert.equal(error, undefined);
    const deltas = events.filter((e) => e.type === "text_delta");
    assert.ok(deltas.length > 1, "several text deltas");
    assert.equal(deltas.map((e) => e.text).join(""), "Hello there, how can I help you today?");
    assert.deepEqual(events.at(-1), { type: "stop", reason: "end_turn" });
    assert.equal(events.at(-2)?.type, "usage");
  });

  it("streams thinking with its signature before the text", async () => {
    server.reset([{ thinking: "Let me consider the question.", signature: "sig-123", text: "Done." }]);
    const { events } = await collect(provider.stream(request()));
    const thinking = events.filter((e) => e.type === "thinking_delta");
    assert.equal(thinking.map((e) => e.text).join(""), "Let me consider the question.");
    assert.equal(thinking.find((e) => e.signature)?.signature, "sig-123");
    const firstText = events.findIndex((e) => e.type === "text_delta");
    assert.ok(firstText > events.findIndex((e) => e.type === "thinking_delta"));
  });

  it("emits one complete tool_call", async () => {
    server.reset([
      { text: "Reading.", tool_calls: [{ name: "Read", input: { file_path: "README.md" }, id: "toolu_1" }] },
    ]);
    const { events } = await collect(provider.stream(request({ tools: [READ_TOOL] })));
    const calls = events.filter((e) => e.type === "tool_call");
    // The text block is block 0, the call block 1.
    assert.deepEqual(calls, [
      { type: "tool_call", id: "toolu_1", name: "Read", input: { file_path: "README.md" }, index: 1 },
    ]);
    // Its argument fragments came first, as they streamed, naming the call.
    const pieces = events.filter((e) => e.type === "tool_call_delta");
    assert.ok(pieces.length >= 1);
    for (const piece of pieces) assert.deepEqual([piece.index, piece.id, piece.name], [1, "toolu_1", "Read"]);
    assert.deepEqual(JSON.parse(pieces.map((p) => p.delta).join("")), { file_path: "README.md" });
    assert.ok(events.indexOf(pieces.at(-1)!) < events.indexOf(calls[0]!));
    assert.deepEqual(events.at(-1), { type: "stop", reason: "tool_use" });
  });

  it("emits several tool calls from one response, each with its own assembled input", async () => {
    server.reset([
      {
        tool_calls: [
          {
            name: "Read",
            input: { file_path: "src/a very long file name.ts", extra: { nested: [1, 2, 3] } },
          },
          { name: "Glob", input: { pattern: "**/*.md" } },
          { name: "Read", input: {} },
        ],
      },
    ]);
    const { events } = await collect(provider.stream(request({ tools: [READ_TOOL, GLOB_TOOL] })));
    const calls = events.filter((e) => e.type === "tool_call");
    assert.equal(calls.length, 3);
    assert.deepEqual(calls[0]?.input, {
      file_path: "src/a very long file name.ts",
      extra: { nested: [1, 2, 3] },
    });
    assert.deepEqual(calls[1]?.input, { pattern: "**/*.md" });
    assert.deepEqual(calls[2]?.input, {});
    assert.equal(new Set(calls.map((c) => c.id)).size, 3, "distinct ids");
  });

  it("reports usage including cache reads and writes", async () => {
    server.reset([
      {
        text: "cached",
        usage: {
          input_tokens: 12,
          output_tokens: 7,
          cache_read_input_tokens: 900,
          cache_creation_input_tokens: 40,
        },
      },
    ]);
    const { events } = await collect(provider.stream(request()));
    const usage = events.find((e) => e.type === "usage");
    assert.deepEqual(usage, {
      type: "usage",
      usage: { inputTokens: 12, outputTokens: 7, cacheReadTokens: 900, cacheWriteTokens: 40 },
    });
  });

  it("marks the system prompt and the last tool for prompt caching", async () => {
    server.reset([{ text: "ok" }]);
    await collect(provider.stream(request({ system: "You are nexo.", tools: [READ_TOOL, GLOB_TOOL] })));
    const body = server.requests()[0]?.body as Record<string, unknown>;
    assert.deepEqual(body.system, [
      { type: "text", text: "You are nexo.", cache_control: { type: "ephemeral" } },
    ]);
    const tools = body.tools as Array<Record<string, unknown>>;
    assert.equal(tools[0]?.cache_control, undefined);
    assert.deepEqual(tools[1]?.cache_control, { type: "ephemeral" });
    assert.deepEqual(tools[0]?.input_schema, READ_TOOL.inputSchema);
    assert.equal(body.stream, true);
    assert.equal(body.max_tokens, 256);
  });

  it("can turn prompt caching off", async () => {
    server.reset([{ text: "ok" }]);
    const uncached = new AnthropicProvider({
      apiKey: "k",
      baseUrl: server.url,
      promptCaching: false,
      clock: noWait,
    });
    await collect(uncached.stream(request({ system: "sys", tools: [READ_TOOL] })));
    const body = server.requests()[0]?.body as Record<string, unknown>;
    assert.equal(JSON.stringify(body).includes("cache_control"), false);
  });

  it("sends tool calls, tool results and signed thinking back in Anthropic's shape", async () => {
    server.reset([{ text: "ok" }]);
    const history: ChatMessage[] = [
      user("read two files"),
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "I should read both.", signature: "sig-abc" },
          { type: "thinking", text: "unsigned, from another provider" },
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "toolu_a", name: "Read", input: { file_path: "a" } },
          { type: "tool_use", id: "toolu_b", name: "Read", input: { file_path: "b" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "text", text: "here you go" },
          { type: "tool_result", toolUseId: "toolu_a", content: "contents of a" },
          { type: "tool_result", toolUseId: "toolu_b", content: "no such file", isError: true },
        ],
      },
    ];
    await collect(provider.stream(request({ messages: history, tools: [READ_TOOL] })));
    const body = server.requests()[0]?.body as { messages: Array<{ role: string; content: unknown[] }> };
    assert.deepEqual(body.messages[1], {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should read both.", signature: "sig-abc" },
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_a", name: "Read", input: { file_path: "a" } },
        { type: "tool_use", id: "toolu_b", name: "Read", input: { file_path: "b" } },
      ],
    });
    assert.deepEqual(body.messages[2], {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_a", content: "contents of a" },
        { type: "tool_result", tool_use_id: "toolu_b", content: "no such file", is_error: true },
        { type: "text", text: "here you go" },
      ],
    });
  });

  it("round-trips a thinking signature from one response into the next request", async () => {
    server.reset([
      { thinking: "pondering", signature: "sig-round-trip", text: "answer" },
      { text: "second" },
    ]);
    const first = await collect(provider.stream(request()));
    const thinkingText = first.events
      .filter((e) => e.type === "thinking_delta")
      .map((e) => e.text)
      .join("");
    const signature = first.events.flatMap((e) =>
      e.type === "thinking_delta" && e.signature ? [e.signature] : [],
    )[0];
    const messages: ChatMessage[] = [
      user("hello"),
      {
        role: "assistant",
        content: [
          { type: "thinking", text: thinkingText, signature },
          { type: "text", text: "answer" },
        ],
      },
      user("and then?"),
    ];
    await collect(provider.stream(request({ messages })));
    const body = server.requests()[1]?.body as {
      messages: Array<{ content: Array<Record<string, unknown>> }>;
    };
    assert.deepEqual(body.messages[1]?.content[0], {
      type: "thinking",
      thinking: "pondering",
      signature: "sig-round-trip",
    });
  });

  it("asks for extended thinking with a budget below max_tokens and no temperature", async () => {
    server.reset([{ text: "ok" }]);
    await collect(provider.stream(request({ thinkingBudget: 2000, maxTokens: 1000, temperature: 0.3 })));
    const body = server.requests()[0]?.body as Record<string, unknown>;
    assert.deepEqual(body.thinking, { type: "enabled", budget_tokens: 2000 });
    assert.ok((body.max_tokens as number) > 2000);
    assert.equal(body.temperature, undefined);
  });

  it("sends the temperature when thinking is off", async () => {
    server.reset([{ text: "ok" }]);
    await collect(provider.stream(request({ temperature: 0.2 })));
    assert.equal((server.requests()[0]!.body as Record<string, unknown>).temperature, 0.2);
  });

  it("reaches /v1/messages whether base_url ends in /v1 or not", async () => {
    server.reset([{ text: "one" }, { text: "two" }, { text: "three" }]);
    for (const base of [server.url, `${server.url}/v1`, `${server.url}/v1/`]) {
      const p = new AnthropicProvider({ apiKey: "k", baseUrl: base, clock: noWait, retry: FAST });
      const { error } = await collect(p.stream(request()));
      assert.equal(error, undefined, base);
    }
    assert.deepEqual(
      server.requests().map((r) => r.path),
      ["/v1/messages", "/v1/messages", "/v1/messages"],
    );
    assert.equal(anthropicBaseUrl("https://api.anthropic.com/v1/"), "https://api.anthropic.com");
  });

  it("sends the API key and extra headers", async () => {
    server.reset([{ text: "ok" }]);
    const p = new AnthropicProvider({
      apiKey: "sk-ant-xyz",
      baseUrl: server.url,
      headers: { "x-team": "blue" },
    });
    await collect(p.stream(request()));
    const headers = server.requests()[0]?.headers ?? {};
    assert.ok(headers.authorization === "Bearer sk-ant-xyz" || headers["x-api-key"] === "sk-ant-xyz");
    assert.equal(headers["x-team"], "blue");
  });

  it("maps 401 to LlmAuthenticationError and does not retry it", async () => {
    server.reset([{ status: 401 }, { text: "never served" }]);
    const { events, error } = await collect(provider.stream(request()));
    assert.ok(error instanceof LlmAuthenticationError, String(error));
    assert.match(error.message, /invalid x-api-key/);
    assert.equal(events.length, 0);
    assert.equal(server.requests().length, 1);
  });

  it("maps 404 to LlmModelNotFoundError naming the model", async () => {
    server.reset([{ status: 404 }]);
    const { error } = await collect(provider.stream(request({ model: "claude-nope" })));
    assert.ok(error instanceof LlmModelNotFoundError, String(error));
    assert.match(error.message, /claude-nope/);
  });

  it("maps 'prompt is too long' to LlmContextOverflowError", async () => {
    server.reset([{ status: 400, message: "prompt is too long: 210443 tokens > 200000 maximum" }]);
    const { error } = await collect(provider.stream(request()));
    assert.ok(error instanceof LlmContextOverflowError, String(error));
  });

  it("maps a 429 that persists past the retries to LlmRateLimitedError with retry_after_secs", async () => {
    server.reset([
      { status: 429, retry_after: 1 },
      { status: 429, retry_after: 1 },
      { status: 429, retry_after: 1 },
    ]);
    const { events, error } = await collect(provider.stream(request()));
    assert.ok(error instanceof LlmRateLimitedError, String(error));
    assert.equal(error.retryAfterSecs, 1);
    assert.equal(events.filter((e) => e.type === "retry").length, 2);
    assert.equal(server.requests().length, 3);
  });

  it("reports a missing API key without touching the network", async () => {
    const keyless = new AnthropicProvider({ baseUrl: server.url });
    const { error } = await collect(keyless.stream(request()));
    assert.ok(error instanceof LlmAuthenticationError);
    assert.match(error.message, /no API key/);
    assert.equal(server.requests().length, 0);
  });

  it("uses default_model when the request names none", async () => {
    server.reset([{ text: "ok" }]);
    const p = new AnthropicProvider({ apiKey: "k", baseUrl: server.url, defaultModel: "claude-default" });
    await collect(p.stream(request({ model: "" })));
    assert.equal((server.requests()[0]!.body as Record<string, unknown>).model, "claude-default");
  });

  it("knows the context window of Claude models", () => {
    assert.equal(provider.contextWindow("claude-sonnet-4-5-20250929"), 200_000);
    const overridden = new AnthropicProvider({ apiKey: "k", contextWindow: 1_000_000 });
    assert.equal(overridden.contextWindow("claude-sonnet-4-5"), 1_000_000);
  });
});
