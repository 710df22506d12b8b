/**
 * SubAgent profiles (`subAgentManagement`): the agents a thread's agent may hand work to. In nexo
 * a profile is an agent of the config directory; `definition` is its entry as the config writes
 * it (keys of the server's own config format).
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema } from "./common.js";

export const SubAgentDefinitionSchema = lazySchema("appserver.subagents", () =>
  z.record(z.string(), z.unknown()),
);
export type SubAgentDefinition = z.infer<typeof SubAgentDefinitionSchema>;

export const SubAgentProfileEntrySchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    name: z.string().min(1),
    isBuiltIn: z.boolean(),
    isTemplate: z.boolean(),
    hasWorkspaceOverride: z.boolean(),
    isDefault: z.boolean(),
    enabled: z.boolean(),
    definition: SubAgentDefinitionSchema,
    builtInDefaults: SubAgentDefinitionSchema.optional(),
    diagnostic: z.looseObject({
      enabled: z.boolean(),
      binaryResolved: z.boolean(),
      hiddenFromPrompt: z.boolean(),
      hiddenReason: z.string().optional(),
      warnings: z.array(z.string()),
    }),
  }),
);
export type SubAgentProfileEntry = z.infer<typeof SubAgentProfileEntrySchema>;

/** Settings every sub-agent shares (nexo has no external-CLI runtimes). */
export const SubAgentSettingsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    externalCliSessionResumeEnabled: z.boolean(),
    model: z.string().nullable(),
  }),
);
export type SubAgentSettings = z.infer<typeof SubAgentSettingsSchema>;

export const SubAgentProfilesListResultSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    defaultName: z.string(),
    settings: SubAgentSettingsSchema,
    profiles: z.array(SubAgentProfileEntrySchema),
  }),
);
export type SubAgentProfilesListResult = z.infer<typeof SubAgentProfilesListResultSchema>;

export const SubAgentNameParamsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({ name: z.string().min(1) }),
);
export type SubAgentNameParams = z.infer<typeof SubAgentNameParamsSchema>;

export const SubAgentSetEnabledParamsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    name: z.string().min(1),
    enabled: z.boolean(),
  }),
);
export type SubAgentSetEnabledParams = z.infer<typeof SubAgentSetEnabledParamsSchema>;

export const SubAgentUpsertParamsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    name: z.string().min(1),
    /** The whole definition: keys it does not carry are removed from the entry. */
    definition: SubAgentDefinitionSchema,
  }),
);
export type SubAgentUpsertParams = z.infer<typeof SubAgentUpsertParamsSchema>;

export const SubAgentProfileResultSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({ profile: SubAgentProfileEntrySchema }),
);
export type SubAgentProfileResult = z.infer<typeof SubAgentProfileResultSchema>;

export const SubAgentRemoveResultSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({ name: z.string(), removed: z.boolean() }),
);
export type SubAgentRemoveResult = z.infer<typeof SubAgentRemoveResultSchema>;

export const SubAgentSettingsUpdateParamsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    externalCliSessionResumeEnabled: z.boolean().nullable().optional(),
    /** The model sub-agents use; null: the model of the agent that spawns them. */
    model: z.string().nullable().optional(),
  }),
);
export type SubAgentSettingsUpdateParams = z.infer<typeof SubAgentSettingsUpdateParamsSchema>;
export const SubAgentSettingsUpdateResultSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({ settings: SubAgentSettingsSchema }),
);
export type SubAgentSettingsUpdateResult = z.infer<typeof SubAgentSettingsUpdateResultSchema>;

export const SubAgentChildrenListParamsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    parentThreadId: z.string().min(1),
    includeClosed: z.boolean().optional(),
    includeThreads: z.boolean().optional(),
  }),
);
export type SubAgentChildrenListParams = z.infer<typeof SubAgentChildrenListParamsSchema>;

/** How a child thread was spawned from its parent. */
export const ThreadSpawnEdgeSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    parentThreadId: z.string(),
    childThreadId: z.string(),
    parentTurnId: z.string().optional(),
    spawnCallId: z.string().optional(),
    depth: z.number().int().nonnegative().optional(),
    agentNickname: z.string().optional(),
    /** `closed` after `subagent/close`. */
    status: z.enum(["open", "closed"]).optional(),
  }),
);
export type ThreadSpawnEdge = z.infer<typeof ThreadSpawnEdgeSchema>;

export const SubAgentChildrenListResultSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    data: z.array(z.looseObject({ edge: ThreadSpawnEdgeSchema, thread: z.unknown().optional() })),
  }),
);
export type SubAgentChildrenListResult = z.infer<typeof SubAgentChildrenListResultSchema>;

export const subAgentMethods = {
  "subagent/profiles/list": method(EmptyObjectSchema, SubAgentProfilesListResultSchema),
  "subagent/profiles/setEnabled": method(SubAgentSetEnabledParamsSchema, SubAgentProfileResultSchema),
  "subagent/profiles/upsert": method(SubAgentUpsertParamsSchema, SubAgentProfileResultSchema),
  "subagent/profiles/remove": method(SubAgentNameParamsSchema, SubAgentRemoveResultSchema),
  "subagent/settings/update": method(SubAgentSettingsUpdateParamsSchema, SubAgentSettingsUpdateResultSchema),
} as const;

export const SubAgentChildParamsSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({
    parentThreadId: z.string().min(1),
    childThreadId: z.string().min(1),
  }),
);
export type SubAgentChildParams = z.infer<typeof SubAgentChildParamsSchema>;
export const SubAgentChildResultSchema = lazySchema("appserver.subagents", () =>
  z.looseObject({ edge: ThreadSpawnEdgeSchema }),
);
export type SubAgentChildResult = z.infer<typeof SubAgentChildResultSchema>;

/** Sub-agent child threads (`subAgentSessions`): the edges of a thread's sub-agent tree. */
export const subAgentSessionMethods = {
  "subagent/children/list": method(SubAgentChildrenListParamsSchema, SubAgentChildrenListResultSchema),
  "subagent/close": method(SubAgentChildParamsSchema, SubAgentChildResultSchema),
  "subagent/resume": method(SubAgentChildParamsSchema, SubAgentChildResultSchema),
} as const;
