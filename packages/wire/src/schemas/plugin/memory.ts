/**
 * Vector memory backend methods (plugin contract §5.w): `memory.vector_upsert`,
 * `memory.vector_search` and `memory.vector_delete`, host → child requests for plugins declaring
 * `[plugin.extends].memory_backends`. `metadata` and `filter` are opaque to the host.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

const EmbeddingSchema = lazySchema("plugin.memory", () =>
  z.array(z.number()).min(1, { error: "embedding must not be empty" }),
);

export const VectorRecordSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    id: z.string().min(1),
    content: z.string(),
    embedding: EmbeddingSchema,
    metadata: z.unknown().optional(),
  }),
);
export type VectorRecord = z.infer<typeof VectorRecordSchema>;

export const VectorUpsertParamsSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    backend: z.string().min(1),
    collection: z.string().min(1),
    records: z.array(VectorRecordSchema),
  }),
);
export type VectorUpsertParams = z.infer<typeof VectorUpsertParamsSchema>;

/** How many records were written (upsert) or removed (delete). */
export const VectorCountResultSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    count: z.number().int().nonnegative(),
  }),
);
export type VectorCountResult = z.infer<typeof VectorCountResultSchema>;

export const VectorUpsertResultSchema = VectorCountResultSchema;
export type VectorUpsertResult = VectorCountResult;

export const VectorQuerySchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    embedding: EmbeddingSchema,
    limit: z.number().int().positive(),
    /** Backend-native filter (Pinecone metadata filter, Qdrant expression, …); never rewritten. */
    filter: z.unknown().optional(),
  }),
);
export type VectorQuery = z.infer<typeof VectorQuerySchema>;

export const VectorSearchParamsSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    backend: z.string().min(1),
    collection: z.string().min(1),
    query: VectorQuerySchema,
  }),
);
export type VectorSearchParams = z.infer<typeof VectorSearchParamsSchema>;

/** One hit; `score` is on the backend's native scale (cosine, dot product or distance). */
export const VectorMatchSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    id: z.string(),
    content: z.string(),
    score: z.number(),
    metadata: z.unknown().optional(),
  }),
);
export type VectorMatch = z.infer<typeof VectorMatchSchema>;

export const VectorSearchResultSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    matches: z.array(VectorMatchSchema),
  }),
);
export type VectorSearchResult = z.infer<typeof VectorSearchResultSchema>;

export const VectorDeleteParamsSchema = lazySchema("plugin.memory", () =>
  z.looseObject({
    backend: z.string().min(1),
    collection: z.string().min(1),
    ids: z.array(z.string()),
  }),
);
export type VectorDeleteParams = z.infer<typeof VectorDeleteParamsSchema>;

export const VectorDeleteResultSchema = VectorCountResultSchema;
export type VectorDeleteResult = VectorCountResult;
