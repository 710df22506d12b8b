/**
 * `memory.yaml`: the agents' long-term memory (facts kept across sessions in the store, found
 * again by full-text recall). Small on purpose: only what the daemon actually acts on.
 */
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import { MAX_RECALL_LIMIT } from "../../store/memory.js";

/** What `memory_recall` returns when the model asks for no particular number. */
export const RECALL_TOOL_DEFAULT_LIMIT = 5;
/** The most `memory_recall` may return in one call: more would flood the context window. */
export const RECALL_TOOL_MAX_LIMIT = 50;

/**
 * memory.yaml's schema, built on use and freed once no parse holds it (config/disposable-schema.ts):
 * the file is parsed at start, on reload and by the admin services' edits, never at idle.
 */
function buildSchema() {
  const LimitSchema = z.int().min(1).max(MAX_RECALL_LIMIT);

  const LongTermMemorySchema = z
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

  return z.strictObject({ long_term: LongTermMemorySchema });
}
export const MemoryFileSchema = disposableSchema(buildSchema);
export type MemoryConfig = z.output<typeof MemoryFileSchema>;

/**
 * The settings used when there is no memory.yaml: what the schema's defaults give for an empty
 * file (a test pins that), written out so that reading them builds no schema.
 */
export const DEFAULT_MEMORY_CONFIG: MemoryConfig = {
  long_term: {
    enabled: true,
    recall: { default_limit: RECALL_TOOL_DEFAULT_LIMIT, max_limit: RECALL_TOOL_MAX_LIMIT },
  },
};
