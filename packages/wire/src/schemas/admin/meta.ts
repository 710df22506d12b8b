/**
 * `nexo/admin/reload`: force the config hot-reload after a batch of mutations, instead of waiting
 * for the file watcher. Gated by agents_crud (whoever may edit yaml may also apply it).
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { EpochMsSchema, NoParamsSchema } from "./common.js";

export const ReloadParamsSchema = NoParamsSchema;
export type ReloadParams = z.infer<typeof ReloadParamsSchema>;

export const ReloadResultSchema = lazySchema("admin.meta", () =>
  z.looseObject({ reloaded_at_ms: EpochMsSchema }),
);
export type ReloadResult = z.infer<typeof ReloadResultSchema>;
