/**
 * Workspace-level helper requests that sit beside threads and turns in the core protocol: the
 * channel directory, commit-message suggestions and welcome-screen prompts.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema, IsoTimestampSchema, SessionIdentitySchema } from "./common.js";

export const ChannelCategorySchema = lazySchema("appserver.workspace", () =>
  z.enum(["builtin", "social", "system", "external"]),
);
export type ChannelCategory = z.infer<typeof ChannelCategorySchema>;

export const ChannelListParamsSchema = EmptyObjectSchema;
export type ChannelListParams = z.infer<typeof ChannelListParamsSchema>;
export const ChannelListResultSchema = lazySchema("appserver.workspace", () =>
  z.looseObject({
    channels: z.array(z.looseObject({ name: z.string().min(1), category: ChannelCategorySchema })),
  }),
);
export type ChannelListResult = z.infer<typeof ChannelListResultSchema>;

/** Gated by the `channelStatus` server capability. */
export const ChannelStatusParamsSchema = EmptyObjectSchema;
export type ChannelStatusParams = z.infer<typeof ChannelStatusParamsSchema>;
export const ChannelStatusResultSchema = lazySchema("appserver.workspace", () =>
  z.looseObject({
    channels: z.array(
      z.looseObject({
        name: z.string().min(1),
        category: ChannelCategorySchema,
        enabled: z.boolean(),
        running: z.boolean(),
      }),
    ),
  }),
);
export type ChannelStatusResult = z.infer<typeof ChannelStatusResultSchema>;

/**
 * Runs on an internal throwaway thread, so clients may briefly see its `thread/*` and `turn/*`
 * notifications.
 */
export const CommitMessageSuggestParamsSchema = lazySchema("appserver.workspace", () =>
  z.looseObject({
    threadId: z.string().min(1),
    /** Workspace-relative paths whose diff the message describes. */
    paths: z.array(z.string().min(1)),
    maxDiffChars: z.number().int().positive().optional(),
  }),
);
export type CommitMessageSuggestParams = z.infer<typeof CommitMessageSuggestParamsSchema>;

export const CommitMessageSuggestResultSchema = lazySchema("appserver.workspace", () =>
  z.looseObject({ message: z.string() }),
);
export type CommitMessageSuggestResult = z.infer<typeof CommitMessageSuggestResultSchema>;

/** Gated by `capabilities.extensions.welcomeSuggestions`; the identity needs its `workspacePath`. */
export const WelcomeSuggestionsParamsSchema = lazySchema("appserver.workspace", () =>
  z.looseObject({
    identity: SessionIdentitySchema,
    /** Defaults to 4. */
    maxItems: z.number().int().positive().optional(),
  }),
);
export type WelcomeSuggestionsParams = z.infer<typeof WelcomeSuggestionsParamsSchema>;

export const WelcomeSuggestionsResultSchema = lazySchema("appserver.workspace", () =>
  z.looseObject({
    items: z.array(z.looseObject({ title: z.string(), prompt: z.string(), reason: z.string().optional() })),
    /** `none` when nothing could be generated and `items` is empty. */
    source: z.enum(["dynamic", "none"]),
    generatedAt: IsoTimestampSchema,
    fingerprint: z.string(),
  }),
);
export type WelcomeSuggestionsResult = z.infer<typeof WelcomeSuggestionsResultSchema>;
