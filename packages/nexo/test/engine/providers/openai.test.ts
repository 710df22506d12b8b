/**
 * The OpenAI Chat Completions provider (and its OpenAI-compatible flavour) against the real mock
 * LLM server over HTTP: what it streams back and what it sends.
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
import { OpenAiProvider, openAiBaseUrl } from "../../../src/engine/providers/openai.js";
import { reasoningEffortFor } from "../../../src/engine/providers/openai-request.js";
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

function request(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "gpt-4o-mini", messages: [user("hello")], maxTokens: 300, ...overrides };
}

type Body = Record<string, unknown> & { messages: Array<Record<string, unknown>> };

describe("OpenAI provider over the mock server", () => {
  const server = new MockLlmServer();
  let provider: OpenAiProvider;

  before(async () => {
    const url = await server.start();
    provider = new OpenAiProvider({ apiKey: "sk-test", baseUrl: `${url}/v1`, retry: FAST, clock: noWait });
  });
  after(() => server.close());
  beforeEach(() => server.reset({ responses: [] }));

  it("streams text in several deltas with usage and the stop reason", async () => {
    // Paced, so the deltas reach nexo in separate reads (deltas of one read are joined: sse.test.ts).
    server.reset([{ text: "The quick brown fox jumps over the lazy dog.", delay_ms: 20 }]);
    const { events, error } = await collect(provider.stream(request()));
    assert.equal(error, undefined);
    const deltas = events.filter((e) => e.type === "text_delta");
    assert.ok(deltas.length > 1);
    assert.equal(deltas.map((e) => e.text).join(""), "The quick brown fox jumps over the lazy dog.");
    assert.equal(events.at(-2)?.type, "usage");
    assert.deepEqual(events.at(-1), { type: "stop", reason: "end_turn" });
  });

  it("turns reasoning_content deltas into thinking_delta events", async () => {
    server.reset([{ thinking: "First, recall the facts.", text: "Answer." }]);
    const { events } = await collect(provider.stream(request({ model: "deepseek-reasoner" })));
    const thinking = events.filter((e) => e.type === "thinking_delta");
    assert.equal(thinking.map((e) => e.text).join(""), "First, recall the facts.");
    assert.ok(
      events.findIndex((e) => e.type === "thinking_delta") < events.findIndex((e) => e.type === "text_delta"),
    );
  });

  it("assembles one tool call from its fragments", async () => {
    server.reset([
      { tool_calls: [{ name: "Read", input: { file_path: "docs/providers.md" }, id: "call_1" }] },
    ]);
    const { events } = await collect(provider.stream(request({ tools: [READ_TOOL] })));
    assert.deepEqual(
      events.filter((e) => e.type === "tool_call"),
      [
        {
          type: "tool_call",
          id: "call_1",
          name: "Read",
          input: { file_path: "docs/providers.md" },
          index: 0,
        },
      ],
    );
    // The fragments were forwarded as they came, numbered like the call.
    const pieces = events.filter((e) => e.type === "tool_call_delta");
    assert.ok(pieces.length >= 1);
    for (const piece of pieces) assert.deepEqual([piece.index, piece.id, piece.name], [0, "call_1", "Read"]);
    assert.deepEqual(JSON.parse(pieces.map((p) => p.delta).join("")), { file_path: "docs/providers.md" });
    assert.deepEqual(events.at(-1), { type: "stop", reason: "tool_use" });
  });

  it("assembles several tool calls keyed by index", async () => {
    server.reset([
      {
        text: "Let me look.",
        tool_calls: [
          { name: "Read", input: { file_path: "a.txt", options: { lines: [1, 20] } } },
          { name: "Bash", input: { command: "ls -la && echo 'done'" } },
        ],
      },
    ]);
    const { events } = await collect(provider.stream(request({ tools: [READ_TOOL] })));
    const calls = events.filter((e) => e.type === "tool_call");
    assert.deepEqual(
      calls.map((c) => [c.name, c.input]),
      [
        ["Read", { file_path: "a.txt", options: { lines: [1, 20] } }],
        ["Bash", { command: "ls -la && echo 'done'" }],
      ],
    );
    assert.notEqual(calls[0]?.id, calls[1]?.id);
  });

  it("reports cached prompt tokens as cache reads and the rest as input", async () => {
    server.reset([
      { text: "ok", usage: { input_tokens: 100, output_tokens: 9, cache_read_input_tokens: 1000 } },
    ]);
    const { events } = await collect(provider.stream(request()));
    assert.deepEqual(
      events.find((e) => e.type === "usage"),
      {
        type: "usage",
        usage: { inputTokens: 100, outputTokens: 9, cacheReadTokens: 1000, cacheWriteTokens: 0 },
      },
    );
    const body = server.requests()[0]?.body as Body;
    assert.deepEqual(body.stream_options, { include_usage: true });
  });

  it("sends system first, assistant tool_calls, and tool results as tool messages", async () => {
    server.reset([{ text: "ok" }]);
    const messages: ChatMessage[] = [
      user("read a and b"),
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "not sent back" },
          { type: "text", text: "Reading both." },
          { type: "tool_use", id: "call_a", name: "Read", input: { file_path: "a" } },
          { type: "tool_use", id: "call_b", name: "Read", input: { file_path: "b" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", toolUseId: "call_a", content: "A" },
          { type: "tool_result", toolUseId: "call_b", content: "missing", isError: true },
          { type: "text", text: "thanks" },
        ],
      },
    ];
    await collect(provider.stream(request({ system: "You are nexo.", messages, tools: [READ_TOOL] })));
    const body = server.requests()[0]?.body as Body;
    assert.deepEqual(body.messages, [
      { role: "system", content: "You are nexo." },
      { role: "user", content: "read a and b" },
      {
        role: "assistant",
        content: "Reading both.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "Read", arguments: '{"file_path":"a"}' } },
          { id: "call_b", type: "function", function: { name: "Read", arguments: '{"file_path":"b"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "A" },
      { role: "tool", tool_call_id: "call_b", content: "Error: missing" },
      { role: "user", content: "thanks" },
    ]);
    assert.deepEqual(body.tools, [
      {
        type: "function",
        function: { name: "Read", description: "Read a file", parameters: READ_TOOL.inputSchema },
      },
    ]);
    assert.equal(body.max_completion_tokens, 300);
    assert.equal(body.max_tokens, undefined);
  });

  it("maps a thinking budget to reasoning_effort for OpenAI only", async () => {
    server.reset([{ text: "ok" }, { text: "ok" }]);
    await collect(provider.stream(request({ model: "o4-mini", thinkingBudget: 8000 })));
    const compatible = new OpenAiProvider({
      flavor: "openai_compatible",
      baseUrl: server.url,
      clock: noWait,
    });
    await collect(compatible.stream(request({ model: "qwen3", thinkingBudget: 8000 })));
    const [openai, local] = server.requests().map((r) => r.body as Body);
    assert.equal(openai?.reasoning_effort, "medium");
    assert.equal(local?.reasoning_effort, undefined);
    assert.equal(reasoningEffortFor(1024), "low");
    assert.equal(reasoningEffortFor(50_000), "high");
  });

  it("serves a keyless OpenAI-compatible server (Ollama) without an Authorization header", async () => {
    server.reset([{ text: "local" }]);
    const ollama = new OpenAiProvider({
      id: "ollama",
      flavor: "openai_compatible",
      baseUrl: server.url,
      clock: noWait,
    });
    const { events, error } = await collect(ollama.stream(request({ model: "llama3.1:8b" })));
    assert.equal(error, undefined);
    assert.equal(
      events
        .filter((e) => e.type === "text_delta")
        .map((e) => (e.type === "text_delta" ? e.text : ""))
        .join(""),
      "local",
    );
    const sent = server.requests()[0];
    assert.equal(sent?.headers.authorization, undefined);
    assert.equal((sent!.body as Body).max_tokens, 300);
    assert.equal(ollama.id, "ollama");
  });

  it("sends the key as a bearer token", async () => {
    server.reset([{ text: "ok" }]);
    await collect(provider.stream(request()));
    assert.equal(server.requests()[0]?.headers.authorization, "Bearer sk-test");
  });

  it("reaches /v1/chat/completions whether base_url ends in /v1 or not", async () => {
    server.reset([{ text: "1" }, { text: "2" }, { text: "3" }]);
    for (const base of [server.url, `${server.url}/`, `${server.url}/v1`]) {
      const p = new OpenAiProvider({
        flavor: "openai_compatible",
        baseUrl: base,
        clock: noWait,
        retry: FAST,
      });
      const { error } = await collect(p.stream(request()));
      assert.equal(error, undefined, base);
    }
    assert.deepEqual(
      server.requests().map((r) => r.path),
      ["/v1/chat/completions", "/v1/chat/completions", "/v1/chat/completions"],
    );
    assert.equal(
      openAiBaseUrl("https://generativelanguage.googleapis.com/v1beta/openai/"),
      "https://generativelanguage.googleapis.com/v1beta/openai",
    );
    assert.equal(openAiBaseUrl("https://api.deepseek.com"), "https://api.deepseek.com/v1");
  });

  it("maps 401, 404, 429 and context_length_exceeded to the typed errors", async () => {
    server.reset([
      { status: 401 },
      { status: 404 },
      { status: 429, retry_after: 120 },
      {
        status: 400,
        body: {
          error: {
            message:
              "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        },
      },
    ]);
    const patient = new OpenAiProvider({
      apiKey: "k",
      baseUrl: server.url,
      clock: noWait,
      retry: { ...FAST, maxRetryAfterMs: 1000 },
    });
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push((await collect(patient.stream(request({ model: "gpt-x" })))).error);
    assert.ok(results[0] instanceof LlmAuthenticationError, String(results[0]));
    assert.ok(results[1] instanceof LlmModelNotFoundError, String(results[1]));
    assert.match((results[1] as Error).message, /gpt-x/);
    assert.ok(results[2] instanceof LlmRateLimitedError, String(results[2]));
    assert.equal((results[2] as LlmRateLimitedError).retryAfterSecs, 120);
    assert.ok(results[3] instanceof LlmContextOverflowError, String(results[3]));
    assert.equal(server.requests().length, 4, "none of these was retried");
  });

  it("requires a key for the openai flavour", async () => {
    const keyless = new OpenAiProvider({ baseUrl: server.url });
    const { error } = await collect(keyless.stream(request()));
    assert.ok(error instanceof LlmAuthenticationError);
    assert.equal(server.requests().length, 0);
  });

  it("can skip stream_options for servers that reject it", async () => {
    server.reset([{ text: "ok" }]);
    const p = new OpenAiProvider({ flavor: "openai_compatible", baseUrl: server.url, includeUsage: false });
    const { events } = await collect(p.stream(request()));
    assert.equal((server.requests()[0]!.body as Body).stream_options, undefined);
    assert.equal(
      events.some((e) => e.type === "usage"),
      false,
    );
    assert.deepEqual(events.at(-1), { type: "stop", reason: "end_turn" });
  });
});
