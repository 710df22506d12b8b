/**
 * `memory_store` and `memory_recall`: the agent's long-term memory, through `ctx.memory`.
 *
 * Storing changes what the agent will know in later sessions, so it is an `edit`; recalling only
 * reads, so it is `info`.
 */
import type { MemoryEntry, Tool, ToolContext, ToolOutput } from "../types.js";
import { errorOutput, oneLine, stringArg } from "./tool-output.js";

export interface MemoryToolOptions {
  /** Entries returned when the call gives no `limit`. Default 5. */
  readonly defaultRecallLimit?: number;
  /** Highest `limit` a call may ask for. Default 50. */
  readonly maxRecallLimit?: number;
}

const NOT_CONFIGURED =
  "Long-term memory is not configured for this agent, so nothing can be stored or recalled";

interface StoreArgs {
  content: string;
  tags?: string[];
}

interface RecallArgs {
  query: string;
  limit?: number;
}

export function createMemoryStoreTool(): Tool {
  return {
    name: "memory_store",
    description:
      "Save a fact to your long-term memory so it can be recalled in later conversations. Keep each " +
      "memory to one self-contained fact; add tags to make it easier to find.",
    inputSchema: {
      type: "object",
      properties: {
        content: { type: "string", minLength: 1, description: "The fact to remember" },
        tags: {
          type: "array",
          items: { type: "string", minLength: 1 },
          maxItems: 20,
          description: "Keywords for recall",
        },
      },
      required: ["content"],
      additionalProperties: false,
    },
    category: "edit",
    source: "builtin",
    describe: (args) => `Remember: ${oneLine(stringArg(args, "content") ?? "", 60)}`,
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as StoreArgs;
      if (ctx.memory === undefined) return errorOutput(NOT_CONFIGURED);
      const entry = await ctx.memory.store(ctx.agentId, args.content, args.tags);
      const tags = entry.tags.length > 0 ? ` (tags: ${entry.tags.join(", ")})` : "";
      return { output: `Stored memory ${entry.id}${tags}`, metadata: { memory_id: entry.id } };
    },
  };
}

export function createMemoryRecallTool(options: MemoryToolOptions = {}): Tool {
  const defaultLimit = options.defaultRecallLimit ?? 5;
  const maxLimit = options.maxRecallLimit ?? 50;
  return {
    name: "memory_recall",
    description:
      "Search your long-term memory for facts saved in earlier conversations. Returns the best matches, " +
      `at most \`limit\` (default ${defaultLimit}).`,
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, description: "What to look for" },
        limit: { type: "integer", minimum: 1, maximum: maxLimit, description: "How many memories to return" },
      },
      required: ["query"],
      additionalProperties: false,
    },
    category: "info",
    source: "builtin",
    describe: (args) => `Recall memories about: ${oneLine(stringArg(args, "query") ?? "", 60)}`,
    async execute(rawArgs, ctx) {
      const args = rawArgs as unknown as RecallArgs;
      return recall(args, ctx, Math.min(args.limit ?? defaultLimit, maxLimit));
    },
  };
}

async function recall(args: RecallArgs, ctx: ToolContext, limit: number): Promise<ToolOutput> {
  if (ctx.memory === undefined) return errorOutput(NOT_CONFIGURED);
  const entries = await ctx.memory.recall(ctx.agentId, args.query, limit);
  if (entries.length === 0) return { output: `No memories match "${args.query}"`, metadata: { count: 0 } };
  return {
    output: entries.map(formatEntry).join("\n"),
    metadata: { count: entries.length, memory_ids: entries.map((entry) => entry.id) },
  };
}

function formatEntry(entry: MemoryEntry): string {
  const tags = entry.tags.length > 0 ? ` [${entry.tags.join(", ")}]` : "";
  return `- (${entry.createdAt.slice(0, 10)}, ${entry.id})${tags} ${entry.content}`;
}
