/**
 * `nexo/admin/memory/query` (memory_query): an agent's long-term memory in the store — the best
 * matches of `query`, or the most recent entries when the query is empty. (The snapshot verbs of
 * the same domain are not served yet: they answer -32601.)
 */
import type { MemoryEntry } from "../../store/index.js";
import { defineAdminDomain } from "../domain.js";

export const DEFAULT_MEMORY_QUERY_LIMIT = 20;
export const MAX_MEMORY_QUERY_LIMIT = 100;

export const memoryDomain = defineAdminDomain({
  domain: "memory",
  handlers: ({ memory }) =>
    memory && {
      "nexo/admin/memory/query": ({ agent_id: agentId, query = "", limit }) => {
        const bounded = Math.min(MAX_MEMORY_QUERY_LIMIT, Math.max(1, limit || DEFAULT_MEMORY_QUERY_LIMIT));
        const entries =
          query.trim() === ""
            ? memory.list(agentId, { limit: bounded })
            : memory.recallRanked(agentId, query, { limit: bounded }).map((hit) => hit.entry);
        return { entries: entries.map(toWire) };
      },
    },
});

function toWire(entry: MemoryEntry) {
  return {
    id: entry.id,
    agent_id: entry.agentId,
    content: entry.content,
    tags: entry.tags,
    concept_tags: entry.conceptTags,
    created_at: entry.createdAt,
    ...(entry.memoryType === null ? {} : { memory_type: entry.memoryType }),
  };
}
