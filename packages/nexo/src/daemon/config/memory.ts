/**
 * `memory.yaml`: the agents' long-term memory (facts kept across sessions in the store, found
 * again by full-text recall). Small on purpose: only what the daemon actually acts on.
 */
import { z } from "zod";
import { MAX_RECALL_LIMIT } from "../../store/memory.js";

/** What `memory_recall` returns when the model asks for no particular number. */
export const RECALL_TOOL_DEFAULT_LIMIT = 5;
/** The most `memory_recall` may return in one call: more would flood the context window. */
export const RECALL_TOOL_MAX_LIMIT = 50;

const LimitSchema = z.int().min(1).max(MAX_RECALL_LIMIT);

export const LongTermMemorySchema = z
  .strictObject({
    /**
     * false: agents get no memory_store / memory_recall tools and plugins' `memory.recall` is
     * refused; what is already stored stays in the database.
     */
    enabled: z.boolean().default(true),
    recall: z
      .strictObject({
        default_limit: LimitSchema.default(RECALL_TOOL_DEFAULT_LIMIT),
        max_limit: LimitSchema.default(RECALL_TOOL_MAX_LIMIT),
      })
      .default({ default_limit: RECALL_TOOL_DEFAULT_LIMIT, max_limit: RECALL_TOOL_MAX_LIMIT })
      .superRefine((recall, ctx) => {
        if (recall.default_limit > recall.max_limit) {
          ctx.addIssue({
            code: "custom",
            path: ["default_limit"],
            message: `default_limit (${recall.default_limit}) is larger than max_limit (${recall.max_limit})`,
          });
        }
      }),
  })
  .default({
    enabled: true,
    recall: { default_limit: RECALL_TOOL_DEFAULT_LIMIT, max_limit: RECALL_TOOL_MAX_LIMIT },
  });

export const MemoryFileSchema = z.strictObject({ long_term: LongTermMemorySchema });
export type MemoryConfig = z.output<typeof MemoryFileSchema>;

/** The settings used when there is no memory.yaml. */
export const DEFAULT_MEMORY_CONFIG: MemoryConfig = MemoryFileSchema.parse({});
