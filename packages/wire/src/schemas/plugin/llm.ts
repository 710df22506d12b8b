/**
 * LLM provider methods (plugin contract §5.y): `llm.chat` (host → child request, sync or streamed)
 * and its `llm.chat.delta` stream notifications (child → host), for plugins declaring
 * `[plugin.extends].llm_providers`. The request mirrors the host's ChatRequest field for field;
 * shapes the contract only names (attachments, system blocks) follow the reference host's wire
 * types.
 */
import { z } from "zod";
import { JsonRpcIdSchema } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { TokenUsageSchema } from "./common.js";
import { LlmMessageRoleSchema } from "./services.js";

export const LlmToolCallSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    id: z.string(),
    name: z.string(),
    arguments: z.unknown(),
  }),
);
export type LlmToolCall = z.infer<typeof LlmToolCallSchema>;

const attachmentBase = {
  /** `image`, `audio`, `video`, `document`; providers decide what they can render. */
  kind: lazySchema("plugin.llm", () => z.string()),
  mime_type: lazySchema("plugin.llm", () => z.string()),
};

/** A multi-modal attachment; `data_kind` says which of `base64` / `url` / `path` carries it. */
export const LlmAttachmentSchema = lazySchema("plugin.llm", () =>
  z.discriminatedUnion("data_kind", [
    z.looseObject({ ...attachmentBase, data_kind: z.literal("base64"), base64: z.string() }),
    z.looseObject({ ...attachmentBase, data_kind: z.literal("url"), url: z.string() }),
    z.looseObject({ ...attachmentBase, data_kind: z.literal("path"), path: z.string() }),
  ]),
);
export type LlmAttachment = z.infer<typeof LlmAttachmentSchema>;

export const LlmChatMessageSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    role: LlmMessageRoleSchema,
    content: z.string(),
    /** With role `tool`: the id of the tool call this message answers. */
    tool_call_id: z.string().optional(),
    /** With role `tool`: the tool's name. */
    name: z.string().optional(),
    /** With role `assistant`: the tool calls that turn requested. */
    tool_calls: z.array(LlmToolCallSchema).optional(),
    attachments: z.array(LlmAttachmentSchema).optional(),
  }),
);
export type LlmChatMessage = z.infer<typeof LlmChatMessageSchema>;

export const LlmToolDefSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    name: z.string().min(1),
    description: z.string(),
    /** JSON Schema of the tool's arguments. */
    parameters: z.unknown(),
  }),
);
export type LlmToolDef = z.infer<typeof LlmToolDefSchema>;

/** `{"kind":"auto"|"any"|"none"}` or `{"kind":"specific","name":"<tool>"}`. */
export const LlmToolChoiceSchema = lazySchema("plugin.llm", () =>
  z.discriminatedUnion("kind", [
    z.looseObject({ kind: z.literal("auto") }),
    z.looseObject({ kind: z.literal("any") }),
    z.looseObject({ kind: z.literal("none") }),
    z.looseObject({ kind: z.literal("specific"), name: z.string().min(1) }),
  ]),
);
export type LlmToolChoice = z.infer<typeof LlmToolChoiceSchema>;

export const LlmCachePolicySchema = lazySchema("plugin.llm", () =>
  z.enum(["none", "ephemeral5m", "ephemeral1h"]),
);
export type LlmCachePolicy = z.infer<typeof LlmCachePolicySchema>;

/** One slice of a structured system prompt with its prompt-cache policy. */
export const LlmSystemBlockSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    text: z.string(),
    cache: LlmCachePolicySchema,
  }),
);
export type LlmSystemBlock = z.infer<typeof LlmSystemBlockSchema>;

export const LlmChatRequestSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    model: z.string().min(1),
    messages: z.array(LlmChatMessageSchema),
    tools: z.array(LlmToolDefSchema).optional(),
    max_tokens: z.number().int().nonnegative(),
    temperature: z.number(),
    system_prompt: z.string().optional(),
    stop_sequences: z.array(z.string()).optional(),
    tool_choice: LlmToolChoiceSchema.optional(),
    system_blocks: z.array(LlmSystemBlockSchema).optional(),
    cache_tools: z.boolean().optional(),
  }),
);
export type LlmChatRequest = z.infer<typeof LlmChatRequestSchema>;

export const LlmChatParamsSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    provider: z.string().min(1),
    model: z.string().min(1),
    stream: z.boolean().default(false),
    request: LlmChatRequestSchema,
  }),
);
export type LlmChatParams = z.infer<typeof LlmChatParamsSchema>;
export type LlmChatParamsInput = z.input<typeof LlmChatParamsSchema>;

export const LlmResponseContentSchema = lazySchema("plugin.llm", () =>
  z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("text"), text: z.string() }),
    z.looseObject({ type: z.literal("tool_calls"), tool_calls: z.array(LlmToolCallSchema) }),
  ]),
);
export type LlmResponseContent = z.infer<typeof LlmResponseContentSchema>;

export const LLM_FINISH_KINDS = ["stop", "tool_use", "length", "other"] as const;

/** `{kind, reason?}`; `reason` explains an `other` finish. */
export const LlmFinishReasonSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    kind: z.enum(LLM_FINISH_KINDS),
    reason: z.string().optional(),
  }),
);
export type LlmFinishReason = z.infer<typeof LlmFinishReasonSchema>;

export const LlmCacheUsageSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    cache_read_input_tokens: z.number().int().nonnegative(),
    cache_creation_input_tokens: z.number().int().nonnegative(),
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
  }),
);
export type LlmCacheUsage = z.infer<typeof LlmCacheUsageSchema>;

/**
 * `llm.chat` result. A streamed call ends with the same shape; its text arrived in the deltas, so
 * its content is usually `{type: "text", text: ""}`.
 */
export const LlmChatResultSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    content: LlmResponseContentSchema,
    usage: TokenUsageSchema,
    finish_reason: LlmFinishReasonSchema,
    cache_usage: LlmCacheUsageSchema.optional(),
  }),
);
export type LlmChatResult = z.infer<typeof LlmChatResultSchema>;

export const LlmChatChunkSchema = lazySchema("plugin.llm", () =>
  z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("text_delta"), delta: z.string() }),
    z.looseObject({ type: z.literal("tool_call_start"), id: z.string(), name: z.string() }),
    z.looseObject({ type: z.literal("tool_call_args_delta"), id: z.string(), delta: z.string() }),
    z.looseObject({ type: z.literal("tool_call_end"), id: z.string() }),
    z.looseObject({ type: z.literal("usage"), usage: TokenUsageSchema }),
    z.looseObject({ type: z.literal("end"), finish_reason: LlmFinishReasonSchema }),
  ]),
);
export type LlmChatChunk = z.infer<typeof LlmChatChunkSchema>;

/** `llm.chat.delta`: one chunk of the streamed `llm.chat` request whose id is `request_id`. */
export const LlmChatDeltaParamsSchema = lazySchema("plugin.llm", () =>
  z.looseObject({
    request_id: JsonRpcIdSchema,
    chunk: LlmChatChunkSchema,
  }),
);
export type LlmChatDeltaParams = z.infer<typeof LlmChatDeltaParamsSchema>;
