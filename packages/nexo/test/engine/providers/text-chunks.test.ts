/**
 * The text-chunk recogniser (text-chunks.ts) against JSON.parse, for both formats: whatever it reads
 * from a chunk is what JSON.parse reads there, and a stream read with it decodes to the same
 * events, usage, stop reason and errors as one read with JSON.parse alone — for arbitrary chunks
 * (escapes, any unicode, tool calls, usage, finish reasons, refusals, reasoning, extra fields,
 * other envelopes, whitespace, text that is not JSON).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import {
  AnthropicStreamDecoder,
  anthropicEventReader,
} from "../../../src/engine/providers/anthropic-stream.js";
import { OpenAiStreamDecoder, openAiChunkReader } from "../../../src/engine/providers/openai-stream.js";
import type { SseMessage } from "../../../src/engine/providers/sse.js";
import {
  anthropicTextField,
  openAiTextField,
  TextChunks,
} from "../../../src/engine/providers/text-chunks.js";

/** Any text, with what needs escaping and what does not: quotes, backslashes, controls, lone surrogates. */
const anyText = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({
    unit: fc.constantFrom("a", " ", '"', "\\", "\n", "\t", "\u0000", "é", "\ud83d", "\ude00", "😀", "/"),
  }),
  fc.string(),
);

/** A stream's envelope: usually like a vendor's, sometimes with anything in its fields. */
const envelope = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        id: fc.constantFrom("chatcmpl-1", "chatcmpl-2"),
        object: fc.constant("chat.completion.chunk"),
        created: fc.nat(),
        model: fc.constantFrom("gpt-x", "llama"),
        system_fingerprint: fc.constantFrom(null, "fp_1"),
        service_tier: fc.constant("default"),
      },
      { requiredKeys: ["id", "object", "created", "model"] },
    ),
  },
  fc.record(
    {
      id: anyText,
      object: fc.constant("chat.completion.chunk"),
      created: fc.oneof(fc.integer(), fc.double()),
      model: anyText,
      system_fingerprint: fc.oneof(fc.constant(null), anyText),
      obfuscation: anyText,
      "1": fc.integer(),
    },
    { requiredKeys: ["id", "object", "created", "model"] },
  ),
);

const toolCall = fc.record(
  {
    index: fc.oneof(fc.nat(3), fc.constant(undefined)),
    id: fc.oneof(fc.constantFrom("call_1", "call_2"), anyText),
    type: fc.constant("function"),
    function: fc.record(
      { name: fc.constantFrom("Read", "Write", ""), arguments: anyText },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ["function"] },
);

/** A delta with anything a Chat Completions delta may carry besides its text. */
const richDelta = fc.record(
  {
    role: fc.constant("assistant"),
    content: fc.oneof(anyText, fc.constant(null)),
    refusal: fc.oneof(anyText, fc.constant(null)),
    reasoning_content: fc.oneof(anyText, fc.constant(null)),
    reasoning: anyText,
    tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 2 }), fc.constant(null)),
    extra: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

const delta = fc.oneof({ weight: 6, arbitrary: fc.record({ content: anyText }) }, richDelta);

const choice = fc.record(
  {
    index: fc.constant(0),
    delta,
    logprobs: fc.constant(null),
    finish_reason: fc.oneof(
      { weight: 6, arbitrary: fc.constant(null) },
      fc.constantFrom("stop", "length", "tool_calls", "content_filter", "other", ""),
    ),
  },
  { requiredKeys: ["index", "delta", "logprobs", "finish_reason"] },
);

const usage = fc.record({
  prompt_tokens: fc.nat(),
  completion_tokens: fc.nat(),
  prompt_tokens_details: fc.record({ cached_tokens: fc.nat() }),
});

/** One chunk: mostly the stream's own envelope around a choice; sometimes another, usage or junk. */
const chunkIn = (base: Record<string, unknown>) =>
  fc.oneof(
    { weight: 8, arbitrary: choice.map((c) => ({ ...base, choices: [c] })) },
    fc.tuple(envelope, choice).map(([other, c]) => ({ ...other, choices: [c] })),
    usage.map((u) => ({ ...base, choices: [], usage: u })),
    fc.tuple(choice, choice).map(([a, b]) => ({ ...base, choices: [a, b] })),
    fc.jsonValue(),
  );

/** How a chunk is written: as JSON.stringify does (as vendors do), or in other valid JSON, or cut/garbled. */
const writing = fc.oneof(
  { weight: 12, arbitrary: fc.constant("plain") },
  fc.constantFrom("spaced", "escaped", "cut", "spliced"),
);

function write(value: unknown, how: string, noise: string, key = "content"): string {
  const plain = JSON.stringify(value) ?? "null";
  switch (how) {
    case "spaced":
      return JSON.stringify(value, null, 1) ?? "null";
    case "escaped":
      return plain.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
    case "cut":
      return plain.slice(0, Math.floor(plain.length / 2));
    case "spliced": {
      const field = `"${key}":"`;
      const at = plain.indexOf(field);
      return at === -1 ? plain : plain.slice(0, at + field.length) + noise + plain.slice(at + field.length);
    }
    default:
      return plain;
  }
}

type Outcome = { events: unknown[] } | { error: string };

/** Reads the messages with `read` and decodes them; the events and stop, or the error thrown. */
function decodeAll(
  read: (message: SseMessage) => ChatCompletionChunk | string | undefined,
  messages: SseMessage[],
) {
  const decoder = new OpenAiStreamDecoder("openai", "http://x");
  const events: unknown[] = [];
  let outcome: Outcome;
  try {
    for (const message of messages) {
      const chunk = read(message);
      if (chunk !== undefined) events.push(...decoder.push(chunk));
    }
    // Tool calls without an id get a random one: compare everything else.
    events.push(
      ...decoder.finish().map((e) => (e.type === "tool_call" ? { ...e, id: e.id.slice(0, 5) } : e)),
    );
    outcome = { events };
  } catch (error) {
    outcome = { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
  return { outcome, events };
}

/** The reader before the recogniser: JSON.parse for every chunk. */
function parseOnly(headers: Headers) {
  let done = false;
  return (message: SseMessage): ChatCompletionChunk | undefined => {
    if (done) return undefined;
    if (message.data.startsWith("[DONE]")) {
      done = true;
      return undefined;
    }
    if (message.event?.startsWith("thread.")) return undefined;
    const chunk = JSON.parse(message.data) as ChatCompletionChunk & { error?: object };
    if (chunk?.error) throw new OpenAI.APIError(undefined, chunk.error, undefined, headers);
    return chunk;
  };
}

describe("text-chunk recogniser, OpenAI format", () => {
  it("reads what JSON.parse reads: the learnt chunk with another content, decoding to that text alone", () => {
    const marker = "\u0002nexo-test-mark\u0003";
    let read = 0;
    const learnable = fc
      .tuple(envelope, choice, fc.oneof(fc.constant({}), richDelta), anyText, fc.option(usage, { freq: 4 }))
      .map(([base, c, rich, content, u]) => ({
        ...base,
        choices: [{ ...c, delta: { ...c.delta, ...rich, content } }],
        ...(u === null ? {} : { usage: u }),
      }));
    fc.assert(
      fc.property(learnable, fc.oneof(fc.string(), anyText), (first, raw) => {
        const learntText = JSON.stringify(first);
        const chunks = new TextChunks(openAiTextField);
        chunks.learn(learntText, JSON.parse(learntText));
        const marked = structuredClone(first);
        marked.choices[0]!.delta.content = marker;
        const parts = JSON.stringify(marked).split(JSON.stringify(marker));
        fc.pre(parts.length === 2);
        // Any text between the quotes, even one that is not a valid string body.
        const data = `${parts[0]}"${raw}"${parts[1]}`;
        const text = chunks.text(data);
        if (text === undefined) return;
        read++;
        const parsed = JSON.parse(data);
        const expected = JSON.parse(learntText);
        expected.choices[0].delta.content = text;
        assert.deepEqual(parsed, expected);
        // Then a finish, so that a usage or tool call the chunk left behind would show.
        const messages = [
          { event: null, data },
          { event: null, data: '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}' },
        ];
        for (const stream of [messages.slice(0, 1), messages]) {
          const viaParse = decodeAll((m) => JSON.parse(m.data), stream);
          const viaText = decodeAll((m) => (m.data === data ? text : JSON.parse(m.data)), stream);
          assert.deepEqual(viaText, viaParse);
        }
      }),
      { numRuns: 3000 },
    );
    assert.ok(read > 150, `the recogniser read ${read} chunks: the property must exercise it`);
  });

  it("recognises the usual text chunk, with and without escapes", () => {
    const chunks = new TextChunks(openAiTextField);
    const at = (content: string) =>
      `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"logprobs":null,"finish_reason":null}]}`;
    assert.equal(chunks.text(at("hi")), undefined, "nothing is recognised before an envelope is learnt");
    chunks.learn(at(""), JSON.parse(at("")));
    assert.equal(chunks.text(at("two words")), "two words");
    assert.equal(chunks.text(at('a "quote"\n\\ é 😀')), 'a "quote"\n\\ é 😀');
    assert.equal(chunks.text(at("x").replace('"model":"m"', '"model":"n"')), undefined);
    assert.equal(chunks.text(at("x").replace('"content":"x"', '"content":"x","content":"y"')), undefined);
    assert.equal(chunks.text(at("x").replace('"content":"x"', '"content":"x\u0001"')), undefined);
  });

  it("a stream read with it decodes as one read with JSON.parse alone", async () => {
    const headers = new Headers();
    let recognised = 0;
    fc.assert(
      fc.property(
        envelope.chain((base) =>
          fc.array(
            fc.tuple(chunkIn(base), writing, anyText, fc.constantFrom(null, null, null, "thread.run")),
            { minLength: 1, maxLength: 16, size: "medium" },
          ),
        ),
        fc.boolean(),
        (chunks, done) => {
          const messages: SseMessage[] = chunks.map(([value, how, noise, event]) => ({
            event,
            data: write(value, how, noise),
          }));
          if (done) messages.push({ event: null, data: "[DONE]" }, { event: null, data: "{" });
          const reader = openAiChunkReader(headers, OpenAI.APIError);
          const counted = (message: SseMessage) => {
            const chunk = reader(message);
            if (typeof chunk === "string") recognised++;
            return chunk;
          };
          assert.deepEqual(decodeAll(counted, messages), decodeAll(parseOnly(headers), messages));
        },
      ),
      { numRuns: 1500 },
    );
    assert.ok(recognised > 1000, `the recogniser read ${recognised} chunks: the property must exercise it`);
  });
});

/** An Anthropic stream's events: mostly text deltas, and everything else a Messages stream sends. */
const anthropicDelta = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constant("text_delta"), text: anyText }) },
  fc.record({ type: fc.constant("thinking_delta"), thinking: anyText }),
  fc.record({ type: fc.constant("signature_delta"), signature: anyText }),
  fc.record({ type: fc.constant("input_json_delta"), partial_json: anyText }),
  fc.record(
    { type: fc.constantFrom("text_delta", "citations_delta"), text: anyText, extra: fc.jsonValue() },
    { requiredKeys: ["type"] },
  ),
);
const anthropicIndex = fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.nat(2));
const anthropicEvent = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      type: fc.constant("content_block_delta"),
      index: anthropicIndex,
      delta: anthropicDelta,
    }),
  },
  fc.record({
    type: fc.constant("content_block_start"),
    index: anthropicIndex,
    content_block: fc.oneof(
      fc.record({ type: fc.constant("text"), text: anyText }),
      fc.record({ type: fc.constant("thinking"), thinking: anyText }),
      fc.record({
        type: fc.constant("tool_use"),
        id: fc.constant("toolu_1"),
        name: fc.constant("Read"),
        input: fc.constant({}),
      }),
    ),
  }),
  fc.record({ type: fc.constant("content_block_stop"), index: anthropicIndex }),
  fc.record({
    type: fc.constant("message_delta"),
    delta: fc.record({ stop_reason: fc.constantFrom("end_turn", "tool_use", "max_tokens") }),
    usage: fc.record({ output_tokens: fc.nat() }),
  }),
  fc.constant({ type: "message_stop" }),
  fc.record({
    type: fc.constant("content_block_delta"),
    index: anthropicIndex,
    delta: anthropicDelta,
    extra: fc.jsonValue(),
  }),
  fc.jsonValue(),
);

/** Decodes Anthropic events read with `read`; the events and the end, or the error thrown. */
function decodeAnthropic(read: (message: SseMessage) => unknown, messages: SseMessage[]) {
  const decoder = new AnthropicStreamDecoder("anthropic", "http://x");
  const events: unknown[] = [];
  try {
    for (const message of messages) {
      const chunk = read(message);
      if (chunk !== undefined) events.push(...decoder.push(chunk as never));
    }
    events.push(...decoder.finish());
    return { events };
  } catch (error) {
    return { events, error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

/** The reader before the recogniser: JSON.parse for every event. */
function anthropicParseOnly(headers: Headers) {
  const reader = anthropicEventReader(headers, Anthropic.APIError);
  return (message: SseMessage) =>
    message.event === null || message.event === "ping" || message.event === "error" || message.data === ""
      ? reader(message)
      : JSON.parse(message.data);
}

describe("text-chunk recogniser, Anthropic format", () => {
  it("reads what JSON.parse reads: the learnt event with another text, decoding to that text alone", () => {
    const marker = "\u0002nexo-test-mark\u0003";
    let read = 0;
    fc.assert(
      fc.property(
        fc.record({
          type: fc.constantFrom(
            "content_block_delta",
            "content_block_delta",
            "content_block_start",
            "message_delta",
          ),
          index: anthropicIndex,
          delta: anthropicDelta,
        }),
        fc.oneof(fc.string(), anyText),
        (first, raw) => {
          const learntText = JSON.stringify(first);
          const chunks = new TextChunks(anthropicTextField);
          chunks.learn(learntText, JSON.parse(learntText));
          const marked = structuredClone(first) as { delta: Record<string, unknown> };
          marked.delta.text = marker;
          const parts = JSON.stringify(marked).split(JSON.stringify(marker));
          fc.pre(parts.length === 2);
          const data = `${parts[0]}"${raw}"${parts[1]}`;
          const text = chunks.text(data);
          if (text === undefined) return;
          read++;
          const expected = JSON.parse(learntText);
          expected.delta.text = text;
          assert.deepEqual(JSON.parse(data), expected);
          // Before a block of each kind, and followed by the end, so any state it left would show.
          for (const start of [
            [],
            [
              '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}',
            ],
          ]) {
            const messages = [...start, data, '{"type":"message_stop"}'].map((d) => ({
              event: "e",
              data: d,
            }));
            const viaParse = decodeAnthropic((m) => JSON.parse(m.data), messages);
            const viaText = decodeAnthropic((m) => (m.data === data ? text : JSON.parse(m.data)), messages);
            assert.deepEqual(viaText, viaParse);
          }
        },
      ),
      { numRuns: 2000 },
    );
    assert.ok(read > 150, `the recogniser read ${read} events: the property must exercise it`);
  });

  it("a stream read with it decodes as one read with JSON.parse alone", () => {
    const headers = new Headers();
    let recognised = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            anthropicEvent,
            writing,
            anyText,
            fc.constantFrom("content_block_delta", "content_block_delta", "ping", null),
          ),
          { minLength: 1, maxLength: 16, size: "medium" },
        ),
        (events) => {
          const messages: SseMessage[] = events.map(([value, how, noise, event]) => ({
            event,
            data: write(value, how, noise, "text"),
          }));
          const reader = anthropicEventReader(headers, Anthropic.APIError);
          const counted = (message: SseMessage) => {
            const chunk = reader(message);
            if (typeof chunk === "string") recognised++;
            return chunk;
          };
          assert.deepEqual(
            decodeAnthropic(counted, messages),
            decodeAnthropic(anthropicParseOnly(headers), messages),
          );
        },
      ),
      { numRuns: 1000 },
    );
    assert.ok(recognised > 300, `the recogniser read ${recognised} events: the property must exercise it`);
  });
});
