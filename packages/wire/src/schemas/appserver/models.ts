/**
 * The model catalog (`modelCatalogManagement`): which models a client may offer in its model
 * picker. A provider problem is not an RPC error: the result says `success: false` with a code and
 * a message, as the reference does.
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema } from "./common.js";

export const ModelCatalogItemSchema = lazySchema("appserver.models", () =>
  z.looseObject({
    /** What `thread/config/update`'s `config.model` and `/model` take. */
    id: z.string().min(1),
    /** Who serves it; nexo names the configured provider entry. */
    ownedBy: z.string(),
    /** ISO 8601; when the provider does not say, when the catalog was read. */
    createdAt: z.string(),
  }),
);
export type ModelCatalogItem = z.infer<typeof ModelCatalogItemSchema>;

export const ModelListParamsSchema = EmptyObjectSchema;
export type ModelListParams = z.infer<typeof ModelListParamsSchema>;

export const ModelListResultSchema = lazySchema("appserver.models", () =>
  z.looseObject({
    success: z.boolean(),
    models: z.array(ModelCatalogItemSchema),
    errorCode: z.string().optional(),
    errorMessage: z.string().optional(),
  }),
);
export type ModelListResult = z.infer<typeof ModelListResultSchema>;

export const modelMethods = {
  "model/list": method(ModelListParamsSchema, ModelListResultSchema),
} as const;
