/** Anthropic request building and stream decoding, on data alone (no server). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toAnthropicMessages, toAnthropicParams } from "../../../src/engine/providers/anthropic-request.js";
import { AnthropicStreamDecoder } from "../../../src/engine/providers/anthropic-stream.js";
import { LlmProviderError } from "../../../src/engine/providers/errors.js";
import type { ChatMessage, ChatRequest } from "../../../src/engine/types.js";

const user = (text: string): ChatMessage => ({ role: "user", content: [{ type: "text", text }] });
const request = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  model: "claude-mock-1",
  messages: [user("hello")],
  maxTokens: 256,
  ...overrides,
});

describe("Anthropic request and stream mapping", () => {
  it("merges consecutive turns of one role and drops empty text", () => {
    const messages = toAnthropicMessages([
      user("first"),
      user(""),
      { role: "user", content: [{ type: "tool_result", toolUseId: "t", content: "r" }] },
      { role: "assistant", content: [{ type: "text", text: "" }] },
      { role: "assistant", content: [{ type: "text", text: "reply" }] },
    ]);
    assert.deepEqual(messages, [
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t", content: "r" },
          { type: "text", text: "first" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "reply" }] },
    ]);
  });

  it("raises the thinking budget to the API minimum", () => {
    const params = toAnthropicParams(request({ thinkingBudget: 10, maxTokens: 4096 }), "m", {
      promptCaching: true,
    });
    assert.deepEqual(params.thinking, { type: "enabled", budget_tokens: 1024 });
    assert.equal(params.max_tokens, 4096);
  });

  it("sends images as base64 sources", () => {
    const [message] = toAnthropicMessages([
      { role: "user", content: [{ type: "image", mediaType: "image/png", data: "AAAA" }] },
    ]);
    assert.deepEqual(message?.content, [
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
    ]);
  });

  it("turns invalid tool-call JSON into a clear LlmProviderError", () => {
    const decoder = new AnthropicStreamDecoder("anthropic", "http://x");
    decoder.push({
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "toolu_x", name: "Read", input: {} },
    } as never);
    decoder.push({
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: '{"file_path": "a' },
    } as never);
    assert.throws(
      () => decoder.push({ type: "content_block_stop", index: 0 } as never),
      (error: unknown) =>
        error instanceof LlmProviderError &&
        /invalid JSON arguments for tool "Read"/.test(error.message) &&
        !error.retryable,
    );
  });

  it("treats a stream without message_stop as cut off", () => {
    const decoder = new AnthropicStreamDecoder("anthropic", "http://x");
    decoder.push({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    } as never);
    assert.throws(() => decoder.finish(), /ended before the response was complete/);
  });
});
