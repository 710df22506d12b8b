/**
 * Child → host services with a real plugin process: memory.recall (limit default and cap, error
 * codes, grants) and llm.complete (text, streamed deltas, tool-call-only answers, grants), and
 * proof that a slow llm.complete does not hold up another request of the same plugin.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type {
  AgentMemory,
  ChatRequest,
  LlmProvider,
  MemoryEntry,
  ProviderEvent,
} from "../../../src/engine/types.js";
import type { PluginGrants } from "../../../src/extensions/plugins/grants.js";
import type { PluginHost } from "../../../src/extensions/plugins/host.js";
import { attachPluginServices, type PluginServiceDeps } from "../../../src/extensions/plugins/services.js";
import { invokePluginTool } from "../../../src/extensions/plugins/tool.js";
import { cleanupHosts, makeHost } from "../../fixtures/plugins/harness.js";

afterEach(cleanupHosts);

/** A real, if small, long-term memory: substring search over what was stored. */
class InMemoryAgentMemory implements AgentMemory {
  readonly entries: MemoryEntry[] = [];
  readonly recallLimits: number[] = [];
  async store(agentId: string, content: string, tags: string[] = []): Promise<MemoryEntry> {
    const entry = {
      id: `m${this.entries.length + 1}`,
      agentId,
      content,
      tags,
      conceptTags: [],
      createdAt: new Date(0).toISOString(),
    };
    this.entries.push(entry);
    return entry;
  }
  async recall(agentId: string, query: string, limit = 10): Promise<MemoryEntry[]> {
    this.recallLimits.push(limit);
    return this.entries.filter((e) => e.agentId === agentId && e.content.includes(query)).slice(0, limit);
  }
}

/** A provider that streams a fixed reply, optionally after a delay, or only tool calls. */
function provider(
  id: string,
  options: { text?: string; delayMs?: number; toolCallsOnly?: boolean } = {},
): LlmProvider {
  return {
    id,
    async *stream(request: ChatRequest): AsyncGenerator<ProviderEvent> {
      if (options.delayMs) await sleep(options.delayMs, undefined, { signal: request.signal });
      if (options.toolCallsOnly) {
        yield { type: "tool_call", id: "c1", name: "x", input: {} };
        yield { type: "stop", reason: "tool_use" };
        return;
      }
      const text =
        options.text ?? `${request.model} says hi to ${JSON.stringify(request.messages[0]?.content)}`;
      for (const piece of text.match(/.{1,5}/g) ?? []) yield { type: "text_delta", text: piece };
      yield { type: "usage", usage: { inputTokens: 12, outputTokens: 4 } };
      yield { type: "stop", reason: "max_tokens" };
    },
  };
}

function lookup(...providers: LlmProvider[]) {
  const byId = new Map(providers.map((p) => [p.id, p]));
  return { get: (id: string) => byId.get(id) };
}

async function startWith(deps: PluginServiceDeps): Promise<PluginHost> {
  const { host } = await makeHost("kitchen");
  attachPluginServices(host, deps);
  await host.start();
  return host;
}

interface RecallOutcome {
  result?: { entries: Array<Record<string, unknown>> };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}
interface CompleteOutcome {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  chunks: string[];
}

const recall = (host: PluginHost, args: Record<string, unknown>) =>
  invokePluginTool(host, "kitchen_recall", args) as Promise<RecallOutcome>;
const complete = (host: PluginHost, args: Record<string, unknown>) =>
  invokePluginTool(host, "kitchen_complete", args) as Promise<CompleteOutcome>;

describe("memory.recall", () => {
  it("returns the granted agent's entries in the wire shape, limit 10 by default, capped at 1000", async () => {
    const memory = new InMemoryAgentMemory();
    await memory.store("ana", "prefers concise answers", ["preference"]);
    await memory.store("ana", "likes tea");
    await memory.store("bob", "prefers long answers");
    const host = await startWith({ memory, grants: { memory_agents: ["ana"] } });

    const outcome = await recall(host, { agent_id: "ana", query: "prefers" });
    assert.deepEqual(outcome.result?.entries, [
      {
        id: "m1",
        agent_id: "ana",
        content: "prefers concise answers",
        tags: ["preference"],
        concept_tags: [],
        created_at: "1970-01-01T00:00:00.000Z",
        memory_type: null,
      },
    ]);
    await recall(host, { agent_id: "ana", query: "x", limit: 50_000 });
    assert.deepEqual(memory.recallLimits, [10, 1000]);
  });

  it("answers -32602 for bad params, -32010 for an agent not granted, -32603 without memory", async () => {
    const memory = new InMemoryAgentMemory();
    const host = await startWith({ memory, grants: { memory_agents: ["ana"] } });
    const bad = await recall(host, { agent_id: "ana", query: 42 });
    assert.equal(bad.error?.code, -32602);
    assert.match(bad.error?.message ?? "", /query/);
    const denied = await recall(host, { agent_id: "bob", query: "x" });
    assert.equal(denied.error?.code, -32010);
    assert.deepEqual(denied.error?.data, { plugin_id: "kitchen", agent_id: "bob", grant: "memory_agents" });
    assert.deepEqual(memory.recallLimits, [], "a denied or invalid call never reaches the memory");

    await cleanupHosts();
    const unconfigured = await startWith({ grants: { memory_agents: "*" } });
    const none = await recall(unconfigured, { agent_id: "ana", query: "x" });
    assert.equal(none.error?.code, -32603);
    assert.match(none.error?.message ?? "", /memory not configured/);
  });

  it("answers -32601 once the services are removed", async () => {
    const { host } = await makeHost("kitchen");
    const remove = attachPluginServices(host, {
      memory: new InMemoryAgentMemory(),
      grants: { memory_agents: "*" },
    });
    await host.start();
    assert.deepEqual((await recall(host, { agent_id: "ana", query: "x" })).result, { entries: [] });
    remove();
    assert.equal((await recall(host, { agent_id: "ana", query: "x" })).error?.code, -32601);
  });

  it("grants nothing by default", async () => {
    const host = await startWith({ memory: new InMemoryAgentMemory() });
    assert.equal((await recall(host, { agent_id: "ana", query: "x" })).error?.code, -32010);
  });
});

describe("llm.complete", () => {
  const grants: PluginGrants = { llm_providers: ["fast", "slow", "tooly", "ghost"] };

  it("answers with the whole text, a finish reason and usage", async () => {
    const host = await startWith({ providers: lookup(provider("fast", { text: "Hello world" })), grants });
    const outcome = await complete(host, { provider: "fast" });
    assert.deepEqual(outcome.result, {
      content: "Hello world",
      finish_reason: "length",
      usage: { prompt_tokens: 12, completion_tokens: 4 },
    });
    assert.deepEqual(outcome.chunks, []);
  });

  it("streams llm.complete.delta chunks, then a final reply without content", async () => {
    const host = await startWith({ providers: lookup(provider("fast", { text: "Hello world!" })), grants });
    const outcome = await complete(host, { provider: "fast", stream: true });
    assert.deepEqual(outcome.chunks, ["Hello", " worl", "d!"]);
    assert.deepEqual(outcome.result, {
      finish_reason: "length",
      usage: { prompt_tokens: 12, completion_tokens: 4 },
    });
  });

  it("answers -32601 when the provider returns only tool calls, -32011 when not granted, -32603 when unknown", async () => {
    const host = await startWith({
      providers: lookup(provider("tooly", { toolCallsOnly: true }), provider("other")),
      grants,
    });
    const tooly = await complete(host, { provider: "tooly" });
    assert.equal(tooly.error?.code, -32601);
    const denied = await complete(host, { provider: "other" });
    assert.equal(denied.error?.code, -32011);
    assert.deepEqual(denied.error?.data, { plugin_id: "kitchen", provider: "other", grant: "llm_providers" });
    const ghost = await complete(host, { provider: "ghost" });
    assert.equal(ghost.error?.code, -32603);
    assert.match(ghost.error?.message ?? "", /unknown LLM provider "ghost"/);
  });

  it("answers -32012 beyond the plugin's limit of concurrent service calls", async () => {
    const memory = new InMemoryAgentMemory();
    const host = await startWith({
      memory,
      providers: lookup(provider("slow", { delayMs: 800 })),
      grants: { ...grants, memory_agents: "*" },
      maxConcurrentCalls: 1,
    });
    const slow = complete(host, { provider: "slow" });
    await sleep(100);
    const refused = await recall(host, { agent_id: "ana", query: "x" });
    assert.equal(refused.error?.code, -32012);
    assert.deepEqual(refused.error?.data, { plugin_id: "kitchen", limit: 1 });
    assert.ok((await slow).result !== undefined);
    assert.deepEqual((await recall(host, { agent_id: "ana", query: "x" })).result, { entries: [] });
  });

  it("never makes another request of the same plugin wait behind a slow completion", async () => {
    const memory = new InMemoryAgentMemory();
    await memory.store("ana", "fast answer");
    const host = await startWith({
      memory,
      providers: lookup(provider("slow", { delayMs: 1_500 })),
      grants: { ...grants, memory_agents: ["ana"] },
    });
    const order: string[] = [];
    const started = Date.now();
    const slow = complete(host, { provider: "slow" }).then((outcome) => {
      order.push("complete");
      return outcome;
    });
    await sleep(100);
    const fast = await recall(host, { agent_id: "ana", query: "fast" });
    order.push("recall");
    const recallMs = Date.now() - started;
    assert.equal(fast.result?.entries.length, 1);
    assert.ok(recallMs < 1_000, `recall took ${recallMs} ms`);
    const slowOutcome = await slow;
    assert.match(String(slowOutcome.result?.content), /says hi/);
    assert.deepEqual(order, ["recall", "complete"]);
  });
});
