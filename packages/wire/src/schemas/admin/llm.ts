/**
 * `nexo/admin/llm/complete`: a one-shot completion run by the daemon with its own provider config
 * and keys, so a microapp can use an LLM without holding credentials. Not streamed.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, NonEmptyStringSchema } from "./common.js";

export const AdminLlmChatMessageSchema = lazySchema("admin.llm", () =>
  z.looseObject({
    role: z.enum(["system", "user", "assistant"]),
    content: z.string(),
  }),
);
export type AdminLlmChatMessage = z.infer<typeof AdminLlmChatMessageSchema>;

export const AdminLlmCompleteParamsSchema = lazySchema("admin.llm", () =>
  z.looseObject({
    /** A provider id of `llm.yaml`. */
    provider: NonEmptyStringSchema,
    model: NonEmptyStringSchema,
    /** Oldest first; the daemon does not truncate to fit the context window. */
    messages: z.array(AdminLlmChatMessageSchema).min(1, { message: "at least one message is required" }),
    max_tokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
    /** Convenience for callers that keep the system prompt apart from `messages`. */
    system_prompt: z.string().optional(),
  }),
);
export type AdminLlmCompleteParams = z.infer<typeof AdminLlmCompleteParamsSchema>;

export const AdminLlmUsageSchema = lazySchema("admin.llm", () =>
  z.looseObject({
    prompt_tokens: CountSchema,
    completion_tokens: CountSchema,
    total_tokens: CountSchema,
  }),
);
export type AdminLlmUsage = z.infer<typeof AdminLlmUsageSchema>;

export const AdminLlmCompleteResultSchema = lazySchema("admin.llm", () =>
  z.looseObject({
    content: z.string(),
    /** The model the provider actually ran (aliases resolved). */
    model: z.string(),
    usage: AdminLlmUsageSchema.optional(),
  }),
);
export type AdminLlmCompleteResult = z.infer<typeof AdminLlmCompleteResultSchema>;
