/**
 * Framework services a plugin calls on its host (plugin contract §5.2, §5.3): `memory.recall` and
 * `llm.complete` (child → host requests) plus the `llm.complete.delta` stream notifications
 * (host → child).
 */
import { z } from "zod";
import { JsonRpcIdSchema } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { TokenUsageSchema } from "./common.js";

// --- memory.recall ------------------------------------------------------------------------------

export const MEMORY_RECALL_DEFAULT_LIMIT = 10;
/** The host clamps `limit` to this (§5.2); the schema accepts larger values so the host can. */
export const MEMORY_RECALL_MAX_LIMIT = 1000;

export const MemoryRecallParamsSchema = lazySchema("plugin.services", () =>
  z.looseObject({
    agent_id: z.string().min(1),
    query: z.string(),
    limit: z.number().int().nonnegative().default(MEMORY_RECALL_DEFAULT_LIMIT),
  }),
);
export type MemoryRecallParams = z.infer<typeof MemoryRecallParamsSchema>;
export type MemoryRecallParamsInput = z.input<typeof MemoryRecallParamsSchema>;

/**
 * One long-term memory entry. `id`, `agent_id` and `content` are what every SDK needs; the list
 * fields default to empty as the TypeScript SDK fills them (notes §5.3).
 */
export const MemoryEntrySchema = lazySchema("plugin.services", () =>
  z.looseObject({
    id: z.string(),
    agent_id: z.string(),
    content: z.string(),
    tags: z.array(z.string()).default([]),
    concept_tags: z.array(z.string()).default([]),
    created_at: z.string().optional(),
    memory_type: z.string().nullable().default(null),
  }),
);
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

export const MemoryRecallResultSchema = lazySchema("plugin.services", () =>
  z.looseObject({
    entries: z.array(MemoryEntrySchema),
  }),
);
export type MemoryRecallResult = z.infer<typeof MemoryRecallResultSchema>;

// --- llm.complete -------------------------------------------------------------------------------

export const LLM_COMPLETE_DEFAULT_MAX_TOKENS = 4096;
export const LLM_COMPLETE_DEFAULT_TEMPERATURE = 0.7;
/** The host clamps `max_tokens` to u32::MAX (§5.3). */
export const LLM_COMPLETE_MAX_TOKENS_CAP = 4_294_967_295;

export const LlmMessageRoleSchema = lazySchema("plugin.services", () =>
  z.enum(["system", "user", "assistant", "tool"]),
);
export type LlmMessageRole = z.infer<typeof LlmMessageRoleSchema>;

export const LlmCompleteMessageSchema = lazySchema("plugin.services", () =>
  z.looseObject({
    role: LlmMessageRoleSchema,
    content: z.string(),
  }),
);
export type LlmCompleteMessage = z.infer<typeof LlmCompleteMessageSchema>;

/**
 * `llm.complete` params. The SDKs always send `max_tokens` and `temperature`, and send `stream`
 * only as `true` (notes §5.4); the defaults cover other clients.
 */
export const LlmCompleteParamsSchema = lazySchema("plugin.services", () =>
  z.looseObject({
    provider: z.string().min(1),
    model: z.string().min(1),
    messages: z.array(LlmCompleteMessageSchema).min(1, { error: "messages must not be empty" }),
    max_tokens: z.number().int().positive().default(LLM_COMPLETE_DEFAULT_MAX_TOKENS),
    temperature: z.number().default(LLM_COMPLETE_DEFAULT_TEMPERATURE),
    system_prompt: z.string().optional(),
    stream: z.boolean().optional(),
  }),
);
export type LlmCompleteParams = z.infer<typeof LlmCompleteParamsSchema>;
export type LlmCompleteParamsInput = z.input<typeof LlmCompleteParamsSchema>;

/** `stop`, `length`, `tool_use`, or `other:<reason>` (§5.3). */
export const LlmCompleteFinishReasonSchema = lazySchema("plugin.services", () =>
  z.union([z.enum(["stop", "length", "tool_use"]), z.templateLiteral(["other:", z.string()])]),
);
export type LlmCompleteFinishReason = z.infer<typeof LlmCompleteFinishReasonSchema>;

/**
 * `llm.complete` result. A streamed call's final reply omits `content` (the child reassembled it
 * from the deltas), so it is optional and nullable.
 */
export const LlmCompleteResultSchema = lazySchema("plugin.services", () =>
  z.looseObject({
    content: z.string().nullable().optional(),
    finish_reason: LlmCompleteFinishReasonSchema,
    usage: TokenUsageSchema,
  }),
);
export type LlmCompleteResult = z.infer<typeof LlmCompleteResultSchema>;

/** `llm.complete.delta`: one text chunk of the streamed request whose id is `request_id`. */
export const LlmCompleteDeltaParamsSchema = lazySchema("plugin.services", () =>
  z.looseObject({
    request_id: JsonRpcIdSchema,
    chunk: z.string(),
  }),
);
export type LlmCompleteDeltaParams = z.infer<typeof LlmCompleteDeltaParamsSchema>;
