/**
 * SubAgent profiles (`subAgentManagement`): the agents a thread's agent may hand work to. In nexo
 * a profile is an agent of the config directory; `definition` is its entry as the config writes
 * it (keys of the server's own config format).
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { EmptyObjectSchema, IsoTimestampSchema } from "./common.js";
import { ThreadSchema } from "./threads.js";

export const SubAgentDefinitionSchema = z.record(z.string(), z.unknown());
export type SubAgentDefinition = z.infer<typeof SubAgentDefinitionSchema>;

export const SubAgentProfileEntrySchema = z.looseObject({
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
});
export type SubAgentProfileEntry = z.infer<typeof SubAgentProfileEntrySchema>;

/** Settings every sub-agent shares: the model they run on (null: their parent's). */
export const SubAgentSettingsSchema = z.looseObject({
  externalCliSessionResumeEnabled: z.boolean(),
  model: z.string().nullable(),
});
export type SubAgentSettings = z.infer<typeof SubAgentSettingsSchema>;

export const SubAgentProfilesListResultSchema = z.looseObject({
  defaultName: z.string(),
  settings: SubAgentSettingsSchema,
  profiles: z.array(SubAgentProfileEntrySchema),
});
export type SubAgentProfilesListResult = z.infer<typeof SubAgentProfilesListResultSchema>;

export const SubAgentNameParamsSchema = z.looseObject({ name: z.string().min(1) });
export type SubAgentNameParams = z.infer<typeof SubAgentNameParamsSchema>;

export const SubAgentSetEnabledParamsSchema = z.looseObject({
  name: z.string().min(1),
  enabled: z.boolean(),
});
export type SubAgentSetEnabledParams = z.infer<typeof SubAgentSetEnabledParamsSchema>;

export const SubAgentUpsertParamsSchema = z.looseObject({
  name: z.string().min(1),
  /** The whole definition: keys it does not carry are removed from the entry. */
  definition: SubAgentDefinitionSchema,
});
export type SubAgentUpsertParams = z.infer<typeof SubAgentUpsertParamsSchema>;

export const SubAgentProfileResultSchema = z.looseObject({ profile: SubAgentProfileEntrySchema });
export type SubAgentProfileResult = z.infer<typeof SubAgentProfileResultSchema>;

export const SubAgentRemoveResultSchema = z.looseObject({ name: z.string(), removed: z.boolean() });
export type SubAgentRemoveResult = z.infer<typeof SubAgentRemoveResultSchema>;

/** At least one key; `model: null` (or "") removes the setting. */
export const SubAgentSettingsUpdateParamsSchema = z.looseObject({
  externalCliSessionResumeEnabled: z.boolean().nullable().optional(),
  model: z.string().nullable().optional(),
});
export type SubAgentSettingsUpdateParams = z.infer<typeof SubAgentSettingsUpdateParamsSchema>;
export const SubAgentSettingsUpdateResultSchema = z.looseObject({ settings: SubAgentSettingsSchema });

/** A parent thread's link to a sub-agent one of its turns spawned. */
export const SubAgentEdgeSchema = z.looseObject({
  parentThreadId: z.string().min(1),
  childThreadId: z.string().min(1),
  parentTurnId: z.string().optional(),
  spawnCallId: z.string().optional(),
  depth: z.number().int().nonnegative(),
  agentNickname: z.string().optional(),
  agentRole: z.string().optional(),
  profileName: z.string().optional(),
  runtimeType: z.string().optional(),
  supportsSendInput: z.boolean(),
  supportsResume: z.boolean(),
  supportsClose: z.boolean(),
  /** `open` while the sub-agent runs, `closed` once it ended or was closed. */
  status: z.enum(["open", "closed"]),
  createdAt: IsoTimestampSchema,
  updatedAt: IsoTimestampSchema,
});
export type SubAgentEdge = z.infer<typeof SubAgentEdgeSchema>;

export const SubAgentChildrenListParamsSchema = z.looseObject({
  parentThreadId: z.string().min(1),
  includeClosed: z.boolean().optional(),
  includeThreads: z.boolean().optional(),
});
export type SubAgentChildrenListParams = z.infer<typeof SubAgentChildrenListParamsSchema>;
export const SubAgentChildrenListResultSchema = z.looseObject({
  data: z.array(z.looseObject({ edge: SubAgentEdgeSchema, thread: ThreadSchema.optional() })),
});
export type SubAgentChildrenListResult = z.infer<typeof SubAgentChildrenListResultSchema>;

export const SubAgentThreadParamsSchema = z.looseObject({
  parentThreadId: z.string().min(1),
  childThreadId: z.string().min(1),
});
export type SubAgentThreadParams = z.infer<typeof SubAgentThreadParamsSchema>;
/** What `subagent/close` and `subagent/resume` answer: the child as it stands after the call. */
export const SubAgentControlResultSchema = SubAgentEdgeSchema.pick({
  childThreadId: true,
  status: true,
  agentNickname: true,
  agentRole: true,
  profileName: true,
  runtimeType: true,
  supportsSendInput: true,
  supportsResume: true,
  supportsClose: true,
});
export type SubAgentControlResult = z.infer<typeof SubAgentControlResultSchema>;

/** Sub-agent sessions (`subAgentSessions`): the children a thread's turns spawned. */
export const subAgentSessionMethods = {
  "subagent/children/list": method(SubAgentChildrenListParamsSchema, SubAgentChildrenListResultSchema),
  "subagent/close": method(SubAgentThreadParamsSchema, SubAgentControlResultSchema),
  "subagent/resume": method(SubAgentThreadParamsSchema, SubAgentControlResultSchema),
} as const;

export const subAgentMethods = {
  "subagent/settings/update": method(SubAgentSettingsUpdateParamsSchema, SubAgentSettingsUpdateResultSchema),
  "subagent/profiles/list": method(EmptyObjectSchema, SubAgentProfilesListResultSchema),
  "subagent/profiles/setEnabled": method(SubAgentSetEnabledParamsSchema, SubAgentProfileResultSchema),
  "subagent/profiles/upsert": method(SubAgentUpsertParamsSchema, SubAgentProfileResultSchema),
  "subagent/profiles/remove": method(SubAgentNameParamsSchema, SubAgentRemoveResultSchema),
} as const;
