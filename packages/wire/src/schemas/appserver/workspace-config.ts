/**
 * Workspace configuration (`workspaceConfigManagement`): the settings a UI changes for the whole
 * workspace — the default model of new conversations, the default approval policy, the model
 * endpoint and key, and feature switches. `workspace/config/update` changes only the keys it
 * carries (`null` removes a setting, its default applies) and answers every setting as it now
 * stands; `workspace/config/schema` describes where each setting is kept and when it applies.
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { EmptyObjectSchema } from "./common.js";

export const WorkspaceApprovalPolicySchema = z.enum(["default", "autoApprove"]);

export const WorkspaceConfigUpdateParamsSchema = z.looseObject({
  model: z.string().nullable().optional(),
  apiKey: z.string().nullable().optional(),
  endPoint: z.string().nullable().optional(),
  welcomeSuggestionsEnabled: z.boolean().nullable().optional(),
  skillsSelfLearningEnabled: z.boolean().nullable().optional(),
  memoryAutoConsolidateEnabled: z.boolean().nullable().optional(),
  defaultApprovalPolicy: z.string().nullable().optional(),
});
export type WorkspaceConfigUpdateParams = z.infer<typeof WorkspaceConfigUpdateParamsSchema>;

/** Every setting as it stands after the update; null: not set (the default applies). */
export const WorkspaceConfigUpdateResultSchema = z.looseObject({
  model: z.string().nullable(),
  apiKey: z.string().nullable(),
  endPoint: z.string().nullable(),
  welcomeSuggestionsEnabled: z.boolean().nullable(),
  skillsSelfLearningEnabled: z.boolean().nullable(),
  memoryAutoConsolidateEnabled: z.boolean().nullable(),
  defaultApprovalPolicy: WorkspaceApprovalPolicySchema.nullable(),
});
export type WorkspaceConfigUpdateResult = z.infer<typeof WorkspaceConfigUpdateResultSchema>;

export const ConfigSchemaFieldSchema = z.looseObject({
  key: z.string().min(1),
  type: z.string().min(1),
  sensitive: z.boolean(),
  /** When a change applies: `hot` (the next turn), `restart` (the next start of the server). */
  reload: z.string().min(1),
  subsystemKey: z.string().optional(),
  description: z.string().optional(),
});

export const ConfigSchemaSectionSchema = z.looseObject({
  section: z.string().min(1),
  order: z.number().int(),
  /** Where the section is kept (a file of the server's config directory). */
  path: z.string(),
  fields: z.array(ConfigSchemaFieldSchema),
});

export const WorkspaceConfigSchemaResultSchema = z.looseObject({
  sections: z.array(ConfigSchemaSectionSchema),
});
export type WorkspaceConfigSchemaResult = z.infer<typeof WorkspaceConfigSchemaResultSchema>;

export const workspaceConfigMethods = {
  "workspace/config/schema": method(EmptyObjectSchema, WorkspaceConfigSchemaResultSchema),
  "workspace/config/update": method(WorkspaceConfigUpdateParamsSchema, WorkspaceConfigUpdateResultSchema),
} as const;
