/**
 * The LLM provider wrapper against a real plugin process: every llm.chat.delta chunk type as
 * provider events, the synchronous mode, -33101..-33105 as the typed LLM errors, the timeout and
 * cancellation.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import {
  LlmAuthenticationError,
  LlmConnectionError,
  LlmContextOverflowError,
  LlmModelNotFoundError,
  LlmRateLimitedError,
} from "@nexo/wire";
import { LlmProviderError } from "../../../src/engine/providers/errors.js";
import { ProviderRegistry } from "../../../src/engine/providers/registry.js";
import type { ChatRequest, ProviderEvent } from "../../../src/engine/types.js";
import { PluginLlmProvider, registerPluginLlmProviders } from "../../../src/extensions/plugins/llm.js";
import { cleanupHosts, startHost as started } from "../../fixtures/plugins/harness.js";

afterEach(cleanupHosts);

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const chat = (text: string): ChatRequest => ({
  model: "m-large",
  system: "be brief",
  messages: [{ role: "user", content: [{ type: "text", text }] }],
  maxTokens: 256,
});

describe("LLM wrapper", () => {
  it("streams every chunk type as provider events", async () => {
    const { host } = await started();
    const registry = new ProviderRegistry();
    registerPluginLlmProviders(host, registry);
    const provider = registry.require("kitchen_llm");
    assert.deepEqual(await collect(provider.stream(chat("tools"))), [
      { type: "text_delta", text: "kitchen_llm: " },
      { type: "text_delta", text: "tools" },
      { type: "tool_call", id: "call_9", name: "kitchen_echo", input: { text: "streamed" } },
      { type: "usage", usage: { inputTokens: 11, outputTokens: 7 } },
      { type: "stop", reason: "tool_use" },
    ]);
    const plain = await collect(provider.stream(chat("hello")));
    assert.deepEqual(
      plain.at(-1),
      { type: "stop", reason: "max_tokens" },
      "the end chunk's length → max_tokens",
    );
  });

  it("maps a synchronous llm.chat result, cache usage included", async () => {
    const { host } = await started();
    const provider = new PluginLlmProvider(host, "kitchen_llm", { streaming: false });
    assert.deepEqual(await collect(provider.stream(chat("hello"))), [
      { type: "text_delta", text: "kitchen_llm/m-large: hello" },
      { type: "usage", usage: { inputTokens: 11, outputTokens: 7 } },
      { type: "usage", usage: { cacheReadTokens: 5, cacheWriteTokens: 2 } },
      { type: "stop", reason: "end_turn" },
    ]);
    assert.deepEqual(await collect(provider.stream(chat("tools"))), [
      { type: "tool_call", id: "call_1", name: "kitchen_echo", input: { text: "hi" } },
      { type: "usage", usage: { inputTokens: 11, outputTokens: 7 } },
      { type: "stop", reason: "tool_use" },
    ]);
  });

  it("maps -33101..-33105 to the typed LLM errors, in both modes", async () => {
    const { host } = await started();
    const expected: Array<[string, new (...args: never[]) => Error]> = [
      ["-33101", LlmConnectionError],
      ["-33102", LlmAuthenticationError],
      ["-33103", LlmRateLimitedError],
      ["-33104", LlmModelNotFoundError],
      ["-33105", LlmContextOverflowError],
    ];
    for (const streaming of [true, false]) {
      const provider = new PluginLlmProvider(host, "kitchen_llm", { streaming });
      for (const [code, type] of expected) {
        await assert.rejects(
          collect(provider.stream(chat(`error:${code}`))),
          type,
          `${code} streaming=${streaming}`,
        );
      }
    }
    await assert.rejects(
      collect(new PluginLlmProvider(host, "kitchen_llm").stream(chat("error:-33103"))),
      (error: unknown) => {
        assert.ok(error instanceof LlmRateLimitedError);
        assert.equal(error.retryAfterSecs, 30);
        return true;
      },
    );
  });

  it("reports a plugin without llm.chat as a provider error that is not retried", async () => {
    const { host } = await started({}, { FIXTURE_UNIMPLEMENTED: "llm.chat" });
    await assert.rejects(
      collect(new PluginLlmProvider(host, "kitchen_llm").stream(chat("hi"))),
      (error: unknown) => {
        assert.ok(error instanceof LlmProviderError);
        assert.equal(error.retryable, false);
        assert.match(error.message, /does not implement llm.chat/);
        return true;
      },
    );
  });

  it("times out after NEXO_PLUGIN_LLM_TIMEOUT_MS as a retryable connection error", async () => {
    const { host } = await started({ NEXO_PLUGIN_LLM_TIMEOUT_MS: "300" });
    for (const streaming of [true, false]) {
      const provider = new PluginLlmProvider(host, "kitchen_llm", { streaming });
      await assert.rejects(collect(provider.stream(chat("slow"))), (error: unknown) => {
        assert.ok(error instanceof LlmConnectionError);
        assert.match(error.message, /timed out after 300 ms/);
        return true;
      });
    }
  });

  it("stops at once when the engine aborts the request", async () => {
    const { host } = await started();
    const controller = new AbortController();
    const provider = new PluginLlmProvider(host, "kitchen_llm");
    const run = collect(provider.stream({ ...chat("slow"), signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("user pressed stop")), 100);
    const started_ = Date.now();
    await assert.rejects(run, /user pressed stop/);
    assert.ok(Date.now() - started_ < 2_000);
  });
});
