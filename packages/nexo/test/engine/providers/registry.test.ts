/**
 * Provider entries of llm.yaml, the registry the engine and plugins look providers up in, and the
 * context-window table.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { AnthropicProvider } from "../../../src/engine/providers/anthropic.js";
import { DuplicateProviderError, UnknownProviderError } from "../../../src/engine/providers/errors.js";
import { OpenAiProvider } from "../../../src/engine/providers/openai.js";
import {
  buildProviderRegistry,
  contextWindow,
  createProvider,
  ProviderConfigSchema,
  ProviderRegistry,
  ProvidersConfigSchema,
} from "../../../src/engine/providers/registry.js";
import { ScriptedProvider } from "../../../src/engine/providers/scripted.js";
import type { LlmProvider, ProviderEvent } from "../../../src/engine/types.js";

describe("ProviderConfigSchema", () => {
  it("accepts the four provider types and keeps unknown keys", () => {
    const parsed = ProviderConfigSchema.parse({
      type: "anthropic",
      api_key: "sk-ant",
      default_model: "claude-sonnet-5",
      retry: { max_retries: 5 },
      rate_limit: { requests_per_second: 2 },
    });
    assert.equal(parsed.type, "anthropic");
    assert.deepEqual((parsed as Record<string, unknown>).rate_limit, { requests_per_second: 2 });
    for (const type of ["openai", "scripted"]) assert.equal(ProviderConfigSchema.parse({ type }).type, type);
  });

  it("requires base_url for openai_compatible and checks it is an http(s) URL", () => {
    const missing = ProviderConfigSchema.safeParse({ type: "openai_compatible" });
    assert.equal(missing.success, false);
    assert.match(missing.error?.issues[0]?.message ?? "", /base_url is required/);
    assert.deepEqual(missing.error?.issues[0]?.path, ["base_url"]);
    assert.equal(
      ProviderConfigSchema.safeParse({ type: "openai_compatible", base_url: "ftp://x" }).success,
      false,
    );
    assert.equal(ProviderConfigSchema.safeParse({ type: "openai", base_url: "not a url" }).success, false);
    assert.equal(
      ProviderConfigSchema.safeParse({ type: "openai_compatible", base_url: "http://localhost:11434" })
        .success,
      true,
    );
  });

  it("rejects an unknown type and bad values with a clear path", () => {
    const result = ProviderConfigSchema.safeParse({ type: "antropic" });
    assert.equal(result.success, false);
    assert.deepEqual(result.error?.issues[0]?.path, ["type"]);
    const retry = ProviderConfigSchema.safeParse({ type: "openai", retry: { max_retries: -1 } });
    assert.deepEqual(retry.error?.issues[0]?.path, ["retry", "max_retries"]);
  });

  it("treats an empty api_key (an unset ${VAR}) as no key", () => {
    assert.equal(ProviderConfigSchema.parse({ type: "openai", api_key: "" }).api_key, undefined);
  });

  it("validates a providers map and its names", () => {
    assert.equal(ProvidersConfigSchema.safeParse({ "my provider": { type: "scripted" } }).success, false);
    assert.equal(
      ProvidersConfigSchema.safeParse({ ollama: { type: "openai_compatible", base_url: "http://h:1" } })
        .success,
      true,
    );
  });
});

describe("createProvider", () => {
  it("builds each type with its id", () => {
    assert.ok(
      createProvider(ProviderConfigSchema.parse({ type: "anthropic", api_key: "k" })) instanceof
        AnthropicProvider,
    );
    const openai = createProvider(ProviderConfigSchema.parse({ type: "openai", api_key: "k" }));
    assert.ok(openai instanceof OpenAiProvider);
    assert.equal(openai.id, "openai");
    const ollama = createProvider(
      ProviderConfigSchema.parse({
        type: "openai_compatible",
        base_url: "http://localhost:11434",
        context_window: 8192,
      }),
      { id: "ollama" },
    );
    assert.equal(ollama.id, "ollama");
    assert.equal(ollama.contextWindow?.("llama3.1"), 8192, "the configured window wins over the table");
    assert.ok(createProvider(ProviderConfigSchema.parse({ type: "scripted" })) instanceof ScriptedProvider);
  });

  it("builds a working OpenAI-compatible provider from config", async () => {
    const server = new MockLlmServer({ script: [{ text: "from config" }] });
    const url = await server.start();
    try {
      const provider = createProvider(
        ProviderConfigSchema.parse({
          type: "openai_compatible",
          base_url: url,
          default_model: "qwen3:8b",
          headers: { "x-tenant": "acme" },
          retry: { max_retries: 0 },
        }),
        { id: "local" },
      );
      const events: ProviderEvent[] = [];
      for await (const e of provider.stream({ model: "", messages: [], maxTokens: 10 })) events.push(e);
      assert.equal(
        events.some((e) => e.type === "text_delta"),
        true,
      );
      const sent = server.requests()[0];
      assert.equal((sent!.body as Record<string, unknown>).model, "qwen3:8b");
      assert.equal(sent?.headers["x-tenant"], "acme");
    } finally {
      await server.close();
    }
  });
});

describe("ProviderRegistry", () => {
  const fake = (id: string): LlmProvider => ({
    id,
    async *stream() {
      yield { type: "stop", reason: "end_turn" } as const;
    },
  });

  it("finds providers by name and lists the known ones when a name is unknown", () => {
    const registry = new ProviderRegistry();
    const cohere = fake("cohere");
    registry.register(cohere);
    registry.register(fake("mistral"));
    assert.equal(registry.get("cohere"), cohere);
    assert.equal(registry.require("cohere"), cohere);
    assert.equal(registry.get("nope"), undefined);
    assert.deepEqual(registry.ids(), ["cohere", "mistral"]);
    assert.throws(
      () => registry.require("antropic"),
      (e: unknown) =>
        e instanceof UnknownProviderError && /antropic/.test(e.message) && /cohere, mistral/.test(e.message),
    );
  });

  it("refuses a duplicate name unless asked to replace", () => {
    const registry = new ProviderRegistry();
    registry.register(fake("p"));
    assert.throws(() => registry.register(fake("p")), DuplicateProviderError);
    const replacement = fake("p");
    registry.register(replacement, { replace: true });
    assert.equal(registry.get("p"), replacement);
  });

  it("lets a registration remove only itself", () => {
    const registry = new ProviderRegistry();
    const first = fake("plugin");
    const removeFirst = registry.register(first);
    const second = fake("plugin");
    const removeSecond = registry.register(second, { replace: true });
    removeFirst();
    assert.equal(registry.get("plugin"), second, "a stale cleanup leaves the newer provider alone");
    removeSecond();
    assert.equal(registry.has("plugin"), false);
  });

  it("always offers scripted, plus every llm.yaml entry under its name", () => {
    const registry = buildProviderRegistry(
      ProvidersConfigSchema.parse({
        claude: { type: "anthropic", api_key: "k" },
        ollama: { type: "openai_compatible", base_url: "http://localhost:11434" },
      }),
    );
    assert.deepEqual(registry.ids(), ["claude", "ollama", "scripted"]);
    assert.ok(registry.get("claude") instanceof AnthropicProvider);
    assert.deepEqual(buildProviderRegistry().ids(), ["scripted"]);
    const custom = buildProviderRegistry(
      ProvidersConfigSchema.parse({ scripted: { type: "scripted", context_window: 1000 } }),
    );
    assert.equal(custom.contextWindow("scripted", "x"), 1000);
  });
});

describe("context windows", () => {
  it("knows common models by family, ignoring vendor prefixes and Ollama tags", () => {
    assert.equal(contextWindow("claude-opus-4-1-20250805"), 200_000);
    assert.equal(contextWindow("gpt-4o-mini"), 128_000);
    assert.equal(contextWindow("gpt-4"), 8_192);
    assert.equal(contextWindow("gpt-4.1-nano"), 1_047_576);
    assert.equal(contextWindow("o1-mini"), 128_000);
    assert.equal(contextWindow("openai/gpt-5-mini"), 400_000);
    assert.equal(contextWindow("llama3.1:8b"), 131_072);
    assert.equal(contextWindow("deepseek-chat"), 128_000);
    assert.equal(contextWindow("MiniMax-M2.5"), 204_800);
    assert.equal(contextWindow("my-finetune"), undefined);
    assert.equal(contextWindow(""), undefined);
  });
});
