import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryRecallTool, createMemoryStoreTool } from "../../../src/engine/tools/memory.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { AgentMemory, MemoryEntry, ToolContext } from "../../../src/engine/types.js";

/** A memory that keeps entries in an array and recalls by word overlap, recording what it was asked. */
class ArrayMemory implements AgentMemory {
  readonly entries: MemoryEntry[] = [];
  readonly recalls: { agentId: string; query: string; limit: number | undefined }[] = [];

  async store(agentId: string, content: string, tags: string[] = []): Promise<MemoryEntry> {
    const entry: MemoryEntry = {
      id: `m${this.entries.length + 1}`,
      agentId,
      content,
      tags,
      conceptTags: [],
      createdAt: "2025-03-04T05:06:07.000Z",
    };
    this.entries.push(entry);
    return entry;
  }

  async recall(agentId: string, query: string, limit?: number): Promise<MemoryEntry[]> {
    this.recalls.push({ agentId, query, limit });
    const words = query.toLowerCase().split(/\s+/);
    return this.entries
      .filter(
        (entry) =>
          entry.agentId === agentId && words.some((word) => entry.content.toLowerCase().includes(word)),
      )
      .slice(0, limit);
  }
}

function ctx(memory: AgentMemory | undefined, agentId = "agent-7"): ToolContext {
  return {
    signal: new AbortController().signal,
    sessionId: "s",
    agentId,
    callId: "c",
    workspace: "/nonexistent",
    unconfined: false,
    ...(memory === undefined ? {} : { memory }),
  };
}

const registry = new ToolRegistry();
registry.register(createMemoryStoreTool());
registry.register(createMemoryRecallTool({ defaultRecallLimit: 2, maxRecallLimit: 10 }));

describe("memory_store and memory_recall", () => {
  it("stores under the calling agent and recalls what was stored", async () => {
    const memory = new ArrayMemory();
    const stored = await registry.invoke(
      "memory_store",
      { content: "The user's cat is called Miso", tags: ["pets", "cat"] },
      ctx(memory),
    );
    assert.deepEqual(stored, { output: "Stored memory m1 (tags: pets, cat)", metadata: { memory_id: "m1" } });
    assert.equal(memory.entries[0]?.agentId, "agent-7");
    await registry.invoke("memory_store", { content: "Prefers tea over coffee" }, ctx(memory));

    const recalled = await registry.invoke("memory_recall", { query: "cat" }, ctx(memory));
    assert.equal(recalled.output, "- (2025-03-04, m1) [pets, cat] The user's cat is called Miso");
    assert.deepEqual(recalled.metadata, { count: 1, memory_ids: ["m1"] });
    assert.deepEqual(memory.recalls.at(-1), { agentId: "agent-7", query: "cat", limit: 2 });

    await registry.invoke("memory_recall", { query: "tea cat", limit: 7 }, ctx(memory));
    assert.equal(memory.recalls.at(-1)?.limit, 7);
  });

  it("keeps agents apart and says when nothing matches", async () => {
    const memory = new ArrayMemory();
    await registry.invoke("memory_store", { content: "secret plan" }, ctx(memory, "agent-a"));
    const other = await registry.invoke("memory_recall", { query: "plan" }, ctx(memory, "agent-b"));
    assert.deepEqual(other, { output: 'No memories match "plan"', metadata: { count: 0 } });
  });

  it("answers with a clear error when no memory is configured", async () => {
    for (const [name, args] of [
      ["memory_store", { content: "x" }],
      ["memory_recall", { query: "x" }],
    ] as const) {
      const output = await registry.invoke(name, args, ctx(undefined));
      assert.equal(output.isError, true);
      assert.match(output.output, /Long-term memory is not configured/);
    }
  });

  it("validates limits and tags", async () => {
    const memory = new ArrayMemory();
    const limit = await registry.invoke("memory_recall", { query: "x", limit: 11 }, ctx(memory));
    assert.equal(limit.output, "Invalid arguments for memory_recall: /limit must be <= 10");
    const empty = await registry.invoke("memory_store", { content: "" }, ctx(memory));
    assert.equal(empty.isError, true);
    assert.equal(memory.entries.length, 0);
  });

  it("describes calls", () => {
    assert.equal(createMemoryStoreTool().describe?.({ content: "likes tea" }), "Remember: likes tea");
    assert.equal(createMemoryRecallTool().describe?.({ query: "drinks" }), "Recall memories about: drinks");
  });
});
