/**
 * The `error.data` shapes the plugin contract attaches to its typed error codes (§5.x, §5.y,
 * §5.w, §5.t), keyed by code. Codes without structured data are absent from the table.
 */
import { z } from "zod";
import { ChannelCode, LlmCode, MemoryCode, PluginHostCode, ToolCode } from "../../errors.js";
import { lazySchema } from "../lazy.js";
import { PublishRefusedDataSchema } from "./broker.js";

const RetryAfterSecsSchema = lazySchema("plugin.error-data", () => z.number().int().nonnegative());

/** -33003: the rejected recipient and why; both fall back to the error message when absent. */
export const ChannelRecipientInvalidDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    recipient: z.string().optional(),
    reason: z.string().optional(),
  }),
);
export type ChannelRecipientInvalidData = z.infer<typeof ChannelRecipientInvalidDataSchema>;

/** -33004 (channel), -33103 (LLM), -33303 (memory): seconds to wait before retrying. */
export const RetryAfterSecsDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    retry_after_secs: RetryAfterSecsSchema,
  }),
);
export type RetryAfterSecsData = z.infer<typeof RetryAfterSecsDataSchema>;

/** -33005: the unsupported feature; falls back to the error message when absent. */
export const ChannelUnsupportedFeatureDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    feature: z.string().optional(),
  }),
);
export type ChannelUnsupportedFeatureData = z.infer<typeof ChannelUnsupportedFeatureDataSchema>;

/** -33301 */
export const MemoryCollectionNotFoundDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    collection: z.string(),
  }),
);
export type MemoryCollectionNotFoundData = z.infer<typeof MemoryCollectionNotFoundDataSchema>;

/** -33302: the backend's dimension and the one it was given. */
export const MemoryDimensionMismatchDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    expected: z.number().int().nonnegative(),
    got: z.number().int().nonnegative(),
  }),
);
export type MemoryDimensionMismatchData = z.infer<typeof MemoryDimensionMismatchDataSchema>;

/** -33402: the offending fields, in whatever shape the plugin chose. */
export const ToolArgumentInvalidDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    details: z.unknown(),
  }),
);
export type ToolArgumentInvalidData = z.infer<typeof ToolArgumentInvalidDataSchema>;

/** -33404: milliseconds to wait before retrying (the `data` object itself is optional). */
export const ToolUnavailableDataSchema = lazySchema("plugin.error-data", () =>
  z.looseObject({
    retry_after_ms: z.number().int().nonnegative(),
  }),
);
export type ToolUnavailableData = z.infer<typeof ToolUnavailableDataSchema>;

/** `error.data` schema by error code, for the codes whose data the contract defines. */
export const pluginErrorData = {
  [ChannelCode.recipientInvalid]: ChannelRecipientInvalidDataSchema,
  [ChannelCode.rateLimited]: RetryAfterSecsDataSchema,
  [ChannelCode.unsupportedFeature]: ChannelUnsupportedFeatureDataSchema,
  [LlmCode.rateLimited]: RetryAfterSecsDataSchema,
  [MemoryCode.collectionNotFound]: MemoryCollectionNotFoundDataSchema,
  [MemoryCode.dimensionMismatch]: MemoryDimensionMismatchDataSchema,
  [MemoryCode.rateLimited]: RetryAfterSecsDataSchema,
  [ToolCode.argumentInvalid]: ToolArgumentInvalidDataSchema,
  [ToolCode.unavailable]: ToolUnavailableDataSchema,
  // nexo's acknowledged publish (./broker.ts).
  [PluginHostCode.publishTopicNotAllowed]: PublishRefusedDataSchema,
  [PluginHostCode.inboxFull]: PublishRefusedDataSchema,
  [PluginHostCode.publishNotRouted]: PublishRefusedDataSchema,
  [PluginHostCode.publishNotAcknowledged]: PublishRefusedDataSchema,
} as const satisfies Record<number, z.ZodType>;
