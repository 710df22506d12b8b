/**
 * Tool invocation (plugin contract §5.t): `tool.invoke`, a host → child request for plugins
 * declaring `[plugin.extends].tools`.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/**
 * `tool.invoke` params. The host always sends all four members; the SDKs tolerate a missing
 * `plugin_id` (they substitute the manifest id), missing `args` (null) and missing `agent_id`
 * (notes §5.7), and so does this schema.
 */
export const ToolInvokeParamsSchema = lazySchema("plugin.tool", () =>
  z.looseObject({
    plugin_id: z.string().optional(),
    tool_name: z.string().min(1),
    /** Any JSON value; the host validated it against the tool's advertised `input_schema`. */
    args: z.unknown().optional(),
    agent_id: z.string().nullable().optional(),
  }),
);
export type ToolInvokeParams = z.infer<typeof ToolInvokeParamsSchema>;

/**
 * ToolInvokeParamsSchema's check by hand, for the dispatcher's hot path (every tool call; zod's
 * parse was a measurable share of a plugin's CPU per call). True only for values the schema
 * accepts unchanged; anything else goes through the schema, which words the -32602.
 */
export function isPlainToolInvokeParams(value: unknown): boolean {
  // A plain object, as JSON.parse makes them (the schema's output always has this prototype).
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    return false;
  }
  const { plugin_id: pluginId, tool_name: toolName, agent_id: agentId } = value as Record<string, unknown>;
  return (
    typeof toolName === "string" &&
    toolName.length > 0 &&
    (pluginId === undefined || typeof pluginId === "string") &&
    (agentId === undefined || agentId === null || typeof agentId === "string")
  );
}

/** The host does not constrain a tool's result beyond it being JSON (§5.t). */
export const ToolInvokeResultSchema = lazySchema("plugin.tool", () => z.unknown());
export type ToolInvokeResult = z.infer<typeof ToolInvokeResultSchema>;

/**
 * One block of a conventional tool result. Only `text` blocks are typed here; others pass through
 * with their `type`.
 */
export const ToolContentBlockSchema = lazySchema("plugin.tool", () =>
  z
    .looseObject({
      type: z.string().min(1),
      text: z.string().optional(),
    })
    .refine((block) => block.type !== "text" || block.text !== undefined, {
      error: 'a "text" block needs a string "text"',
      path: ["text"],
    }),
);
export type ToolContentBlock = z.infer<typeof ToolContentBlockSchema>;

/** The conventional result shape (the host's ToolResponse): content blocks plus an error flag. */
export const ToolResponseSchema = lazySchema("plugin.tool", () =>
  z.looseObject({
    content: z.array(ToolContentBlockSchema),
    is_error: z.boolean().default(false),
  }),
);
export type ToolResponse = z.infer<typeof ToolResponseSchema>;
