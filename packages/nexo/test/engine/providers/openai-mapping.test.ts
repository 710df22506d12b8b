/** OpenAI request building and stream decoding on data alone, including what real servers get wrong. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlmConnectionError } from "@nexo/wire";
import { LlmProviderError } from "../../../src/engine/providers/errors.js";
import { toOpenAiMessages } from "../../../src/engine/providers/openai-request.js";
import { mapOpenAiUsage, OpenAiStreamDecoder } from "../../../src/engine/providers/openai-stream.js";

describe("OpenAI stream decoding", () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    ({
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
    }) as never;

  it("rejects tool arguments that are not JSON with a clear error", () => {
    const decoder = new OpenAiStreamDecoder("openai", "http://x");
    decoder.push(
      chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "Read", arguments: "{'path': " } }] }),
    );
    decoder.push(chunk({}, "tool_calls"));
    assert.throws(
      () => decoder.finish(),
      (error: unknown) =>
        error instanceof LlmProviderError && /invalid JSON arguments for tool "Read"/.test(error.message),
    );
  });

  it("rejects tool arguments that are JSON but not an object", () => {
    const decoder = new OpenAiStreamDecoder("openai", "http://x");
    decoder.push(
      chunk(
        { tool_calls: [{ index: 0, id: "call_1", function: { name: "Read", arguments: "[1,2]" } }] },
        "tool_calls",
      ),
    );
    assert.throws(() => decoder.finish(), /must be a JSON object/);
  });

  it("treats a stream without a finish reason as cut off", () => {
    const decoder = new OpenAiStreamDecoder("openai", "http://x");
    decoder.push(chunk({ content: "partial" }));
    assert.throws(
      () => decoder.finish(),
      (e: unknown) => e instanceof LlmConnectionError,
    );
  });

  it("splits calls when a server reuses an index for a new id, and names id-less calls", () => {
    const decoder = new OpenAiStreamDecoder("ollama", "http://x");
    decoder.push(
      chunk({
        tool_calls: [{ index: 0, id: "a", function: { name: "Read", arguments: '{"file_path":"x"}' } }],
      }),
    );
    decoder.push(
      chunk({
        tool_calls: [{ index: 0, id: "b", function: { name: "Glob", arguments: '{"pattern":"*"}' } }],
      }),
    );
    decoder.push(chunk({ tool_calls: [{ index: 1, function: { name: "Grep", arguments: "" } }] }, "stop"));
    const events = decoder.finish();
    const calls = events.filter((e) => e.type === "tool_call");
    assert.deepEqual(
      calls.map((c) => [c.id.startsWith("call_") || c.id, c.name, c.input]),
      [
        ["a", "Read", { file_path: "x" }],
        ["b", "Glob", { pattern: "*" }],
        [true, "Grep", {}],
      ],
    );
    assert.deepEqual(
      events.at(-1),
      { type: "stop", reason: "tool_use" },
      "tool calls with finish 'stop' still mean tool_use",
    );
  });

  it("reads Ollama's `reasoning` field and DeepSeek's cache-hit usage", () => {
    const decoder = new OpenAiStreamDecoder("ollama", "http://x");
    assert.deepEqual(decoder.push(chunk({ reasoning: "hmm" })), [{ type: "thinking_delta", text: "hmm" }]);
    assert.deepEqual(
      mapOpenAiUsage({ prompt_tokens: 50, completion_tokens: 5, prompt_cache_hit_tokens: 30 }),
      {
        inputTokens: 20,
        outputTokens: 5,
        cacheReadTokens: 30,
        cacheWriteTokens: 0,
      },
    );
  });

  it("sends images as data URLs in content parts", () => {
    const [message] = toOpenAiMessages(undefined, [
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image", mediaType: "image/png", data: "QUJD" },
        ],
      },
    ]);
    assert.deepEqual(message, {
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,QUJD" } },
      ],
    });
  });
});
