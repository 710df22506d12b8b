/**
 * The server-sent-events reader the providers use (sse.ts): the format's line endings, comments
 * and fields, with messages cut at any point between reads; and what a vendor's stream carries
 * besides chunks (an error sent mid-stream, a garbled event, a truncated body, a burst of deltas in
 * one read) through both providers against a real HTTP server that writes those bytes.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { LlmConnectionError, LlmRateLimitedError } from "@nexo/wire";
import fc from "fast-check";
import { AnthropicProvider } from "../../../src/engine/providers/anthropic.js";
import { LlmProviderError } from "../../../src/engine/providers/errors.js";
import { OpenAiProvider } from "../../../src/engine/providers/openai.js";
import type { RetryPolicy } from "../../../src/engine/providers/retry.js";
import { type SseMessage, SseParser } from "../../../src/engine/providers/sse.js";
import type { ProviderEvent } from "../../../src/engine/types.js";

function parseAll(pieces: string[]): SseMessage[] {
  const parser = new SseParser();
  const out = pieces.flatMap((piece) => parser.push(piece));
  parser.end();
  return out;
}

describe("SseParser", () => {
  it("reads events, data lines, comments and every line ending", () => {
    const text =
      "\uFEFF: a comment\nevent: ping\ndata: {}\n\n" +
      "data: one\r\ndata:two\r\n\r\n" +
      "id: 7\rretry: 10\rdata: three\r\r" +
      "event: only\n\n" +
      "\n\n" +
      "data: cut off";
    assert.deepEqual(parseAll([text]), [
      { event: "ping", data: "{}" },
      { event: null, data: "one\ntwo" },
      { event: null, data: "three" },
      { event: "only", data: "" },
    ]);
  });

  it("gives the same messages however the text is cut into reads", () => {
    const text =
      'event: content_block_delta\r\ndata: {"a":"é"}\r\n\r\n: keep-alive\n\ndata: x\rdata: y\r\rdata: [DONE]\n\n';
    const whole = parseAll([text]);
    assert.equal(whole.length, 3);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 12 }), (cuts) => {
        const sorted = [...cuts].sort((a, b) => a - b);
        const pieces: string[] = [];
        let at = 0;
        for (const cut of sorted) {
          pieces.push(text.slice(at, cut));
          at = cut;
        }
        pieces.push(text.slice(at));
        assert.deepEqual(parseAll(pieces), whole);
      }),
    );
  });
});

/** An HTTP server that answers every request with the next canned SSE body. */
class RawSse {
  private server: Server | undefined;
  bodies: string[] = [];
  url = "";
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(this.bodies.shift() ?? "");
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server!.close(() => resolve()));
  }
}

const ONCE: RetryPolicy = {
  maxRetries: 0,
  initialBackoffMs: 1,
  maxBackoffMs: 1,
  multiplier: 1,
  jitter: 0,
  maxRetryAfterMs: 1,
};

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

const request = {
  model: "m",
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }],
  maxTokens: 10,
};
const text = (events: ProviderEvent[]) => events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");

describe("what a vendor stream carries besides chunks", () => {
  const server = new RawSse();
  before(() => server.start());
  after(() => server.close());
  const anthropic = () => new AnthropicProvider({ apiKey: "k", baseUrl: server.url, retry: ONCE });
  const openai = () => new OpenAiProvider({ apiKey: "k", baseUrl: server.url, retry: ONCE });
  const anthropicStart =
    'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":0}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
    'event: ping\ndata: {"type":"ping"}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n';
  const openAiChunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

  it("Anthropic: an error event mid-stream is the typed error, after the text before it", async () => {
    server.bodies.push(
      `${anthropicStart}event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}\n\n`,
    );
    const { events, error } = await collect(anthropic().stream(request));
    assert.equal(text(events), "Hello");
    assert.ok(error instanceof LlmRateLimitedError, String(error));
    assert.match(error.message, /slow down/);
  });

  it("Anthropic: a complete stream in CRLF lines, cut anywhere, reads whole", async () => {
    const whole = `${anthropicStart}event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
    server.bodies.push(whole.replaceAll("\n", "\r\n"));
    const { events, error } = await collect(anthropic().stream(request));
    assert.equal(error, undefined);
    assert.equal(text(events), "Hello");
    assert.deepEqual(events.at(-1), { type: "stop", reason: "end_turn" });
  });

  it("Anthropic: a body that ends before message_stop is a truncated stream", async () => {
    server.bodies.push(anthropicStart);
    const { error } = await collect(anthropic().stream(request));
    assert.ok(error instanceof LlmConnectionError, String(error));
    assert.equal((error.data as { reason?: string }).reason, "stream_truncated");
  });

  it("OpenAI: a chunk carrying an error is the typed error; anything after [DONE] is ignored", async () => {
    server.bodies.push(
      openAiChunk({ content: "Hi" }) +
        `data: ${JSON.stringify({ error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } })}\n\n`,
    );
    const { events, error } = await collect(openai().stream(request));
    assert.equal(text(events), "Hi");
    assert.ok(error instanceof LlmRateLimitedError, String(error));

    server.bodies.push(
      `${openAiChunk({ content: "Hi" })}${openAiChunk({}, "stop")}data: [DONE]\n\n${openAiChunk({ content: "late" })}`,
    );
    const done = await collect(openai().stream(request));
    assert.equal(done.error, undefined);
    assert.equal(text(done.events), "Hi");
    assert.deepEqual(done.events.at(-1), { type: "stop", reason: "end_turn" });
  });

  it("deltas that arrive in one read leave as one delta per kind, the text unchanged", async () => {
    const words = Array.from({ length: 50 }, (_, i) => `w${i} `);
    server.bodies.push(
      words.map((w) => openAiChunk({ reasoning_content: w })).join("") +
        words.map((w) => openAiChunk({ content: w })).join("") +
        openAiChunk({}, "stop"),
    );
    const { events, error } = await collect(openai().stream(request));
    assert.equal(error, undefined);
    const deltas = events.filter((e) => e.type === "text_delta");
    const thinking = events.filter((e) => e.type === "thinking_delta");
    assert.equal(text(events), words.join(""));
    assert.equal(thinking.map((e) => e.text).join(""), words.join(""));
    // One write of a few KiB is normally one read; a split by the kernel still joins most of it.
    assert.ok(deltas.length < 10 && thinking.length < 10, `${deltas.length} / ${thinking.length} deltas`);
    // Thinking stays before the text: deltas are joined only to the one right before them.
    assert.ok(
      events.findIndex((e) => e.type === "text_delta") >
        events.findLastIndex((e) => e.type === "thinking_delta"),
    );
  });

  it("OpenAI: a data line that is not JSON is a provider error, not a crash", async () => {
    server.bodies.push(`${openAiChunk({ content: "Hi" })}data: {not json\n\n`);
    const { error } = await collect(openai().stream(request));
    assert.ok(error instanceof LlmProviderError, String(error));
    assert.match(error.message, /cannot parse/);
  });
});
