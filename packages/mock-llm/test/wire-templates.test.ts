/**
 * The stream events written from templates (json-template.ts) are byte for byte the events written
 * one JSON.stringify each — the reference renderings below are how the mock wrote them before — for
 * any text, thinking, tool calls, model name (including one holding the template's marker) and
 * stop reason.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { anthropicStreamEvents } from "../src/anthropic-wire.js";
import { MARK } from "../src/json-template.js";
import { openAiStreamEvents } from "../src/openai-wire.js";
import { type ResolvedReply, splitJson } from "../src/reply.js";

/** Two words a delta, as reply.ts splits (its own copy, so the cache there is under test too). */
function referenceSplit(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 2) out.push(words.slice(i, i + 2).join(""));
  return out;
}

const FINISH = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter",
};

function referenceOpenAi(reply: ResolvedReply, includeUsage: boolean, created: number): string[] {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: reply.id,
      object: "chat.completion.chunk",
      created,
      model: reply.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })}\n\n`;
  const events = [chunk({ role: "assistant", content: "" })];
  if (reply.thinking !== undefined)
    for (const piece of referenceSplit(reply.thinking)) events.push(chunk({ reasoning_content: piece }));
  for (const piece of referenceSplit(reply.text)) events.push(chunk({ content: piece }));
  reply.toolCalls.forEach((call, index) => {
    events.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const piece of splitJson(JSON.stringify(call.input)))
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  events.push(chunk({}, FINISH[reply.stopReason]));
  if (includeUsage) {
    const prompt = reply.usage.input + reply.usage.cacheRead;
    events.push(
      `data: ${JSON.stringify({
        id: reply.id,
        object: "chat.completion.chunk",
        created,
        model: reply.model,
        choices: [],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: reply.usage.output,
          total_tokens: prompt + reply.usage.output,
          prompt_tokens_details: { cached_tokens: reply.usage.cacheRead },
        },
      })}\n\n`,
    );
  }
  events.push("data: [DONE]\n\n");
  return events;
}

function referenceAnthropic(reply: ResolvedReply): string[] {
  const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  const events = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: reply.id,
        type: "message",
        role: "assistant",
        model: reply.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: reply.usage.input,
          output_tokens: 1,
          cache_creation_input_tokens: reply.usage.cacheWrite,
          cache_read_input_tokens: reply.usage.cacheRead,
        },
      },
    }),
    sse("ping", { type: "ping" }),
  ];
  let index = 0;
  const block = (start: unknown, deltas: unknown[]) => {
    events.push(sse("content_block_start", { type: "content_block_start", index, content_block: start }));
    for (const delta of deltas)
      events.push(sse("content_block_delta", { type: "content_block_delta", index, delta }));
    events.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  };
  if (reply.thinking !== undefined)
    block({ type: "thinking", thinking: "", signature: "" }, [
      ...referenceSplit(reply.thinking).map((thinking) => ({ type: "thinking_delta", thinking })),
      { type: "signature_delta", signature: reply.signature },
    ]);
  if (reply.text !== "")
    block(
      { type: "text", text: "" },
      referenceSplit(reply.text).map((text) => ({ type: "text_delta", text })),
    );
  for (const call of reply.toolCalls)
    block(
      { type: "tool_use", id: call.id, name: call.name, input: {} },
      splitJson(JSON.stringify(call.input)).map((partial_json) => ({
        type: "input_json_delta",
        partial_json,
      })),
    );
  events.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: reply.stopReason, stop_sequence: null },
      usage: { output_tokens: reply.usage.output },
    }),
    sse("message_stop", { type: "message_stop" }),
  );
  return events;
}

/** Text with many word breaks, quotes, escapes, control characters, astral and lone surrogates. */
const text = fc.oneof(
  fc.string({ unit: "binary" }),
  fc
    .array(
      fc.constantFrom(
        " ",
        "\n",
        "\t",
        "a",
        "word",
        "é",
        '"',
        "\\",
        "😀",
        "\ud800",
        "\udc00",
        "\u0000",
        "\u2028",
        MARK,
      ),
    )
    .map((parts) => parts.join("")),
);

const reply: fc.Arbitrary<ResolvedReply> = fc.record({
  id: fc.oneof(fc.constant("chatcmpl-mock_1"), fc.string()),
  // A model named the marker, or ending in it after a quote (which JSON writes as \" — so the
  // marker's JSON, quotes and all, stands in the model's), must not be taken for the open string.
  model: fc.oneof(
    fc.constant("gpt-mock"),
    fc.string({ unit: "binary" }),
    fc.constantFrom(MARK, `m"${MARK}`, `m${MARK}`),
  ),
  text,
  thinking: fc.option(text, { nil: undefined }),
  signature: fc.string(),
  toolCalls: fc.array(
    fc.record({ id: fc.string(), name: fc.string(), input: fc.dictionary(fc.string(), fc.jsonValue()) }),
    { maxLength: 2 },
  ),
  stopReason: fc.constantFrom("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"),
  usage: fc.record({ input: fc.nat(), output: fc.nat(), cacheRead: fc.nat(), cacheWrite: fc.nat() }),
}) as fc.Arbitrary<ResolvedReply>;

describe("stream events written from templates", () => {
  it("are the OpenAI chunks JSON.stringify writes, byte for byte", () => {
    fc.assert(
      fc.property(reply, fc.boolean(), fc.nat(), (r, usage, created) => {
        // Twice: the second rendering of a text comes from reply.ts's cache.
        assert.deepEqual(openAiStreamEvents(r, usage, created), referenceOpenAi(r, usage, created));
        assert.deepEqual(openAiStreamEvents(r, usage, created), referenceOpenAi(r, usage, created));
      }),
      { numRuns: 300 },
    );
  });

  it("are the Anthropic events JSON.stringify writes, byte for byte", () => {
    fc.assert(
      fc.property(reply, (r) => {
        assert.deepEqual(anthropicStreamEvents(r), referenceAnthropic(r));
        assert.deepEqual(anthropicStreamEvents(r), referenceAnthropic(r));
      }),
      { numRuns: 300 },
    );
  });

  it("write a model name holding the template's marker whole", () => {
    const r: ResolvedReply = {
      id: "chatcmpl-mock_1",
      model: `gpt"${MARK}`,
      text: "one two three four five",
      thinking: undefined,
      signature: "",
      toolCalls: [],
      stopReason: "end_turn",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
    };
    const events = openAiStreamEvents(r, false, 7);
    assert.deepEqual(events, referenceOpenAi(r, false, 7));
    assert.equal(JSON.parse(events[1]!.slice("data: ".length)).model, r.model);
  });
});
