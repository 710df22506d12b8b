/**
 * Workspace configuration (`workspaceConfigManagement`): the settings a client's settings page
 * edits for the whole workspace, and a description of where each one lives. Every update field is
 * optional and only the fields present are changed; `null` clears a field back to its default. The
 * result carries every field as persisted after the update (`null`: not set for this workspace).
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema } from "./common.js";

/** When a change takes effect: at once, after its subsystem restarts, or after the server restarts. */
export const ConfigReloadSchema = lazySchema("appserver.workspace-config", () =>
  z.enum(["hot", "subsystemRestart", "processRestart"]),
);
export type ConfigReload = z.infer<typeof ConfigReloadSchema>;

export const ConfigSchemaFieldSchema = lazySchema("appserver.workspace-config", () =>
  z.looseObject({
    /** The `workspace/config/update` field this describes. */
    key: z.string().min(1),
    displayName: z.string().optional(),
    type: z.string().min(1),
    /** Never echoed in clear. */
    sensitive: z.boolean(),
    options: z.array(z.string()).optional(),
    hint: z.string().optional(),
    reload: ConfigReloadSchema,
    subsystemKey: z.string().optional(),
  }),
);
export type ConfigSchemaField = z.infer<typeof ConfigSchemaFieldSchema>;

export const ConfigSchemaSectionSchema = lazySchema("appserver.workspace-config", () =>
  z.looseObject({
    section: z.string().min(1),
    order: z.number().int(),
    /** Where the section's values are stored (the server's own file and keys). */
    path: z.array(z.string()).optional(),
    fields: z.array(ConfigSchemaFieldSchema),
  }),
);
export type ConfigSchemaSection = z.infer<typeof ConfigSchemaSectionSchema>;

export const WorkspaceConfigSchemaResultSchema = lazySchema("appserver.workspace-config", () =>
  z.looseObject({
    sections: z.array(ConfigSchemaSectionSchema),
  }),
);
export type WorkspaceConfigSchemaResult = z.infer<typeof WorkspaceConfigSchemaResultSchema>;

const nullableString = lazySchema("appserver.workspace-config", () => z.string().nullable().optional());
const nullableBoolean = lazySchema("appserver.workspace-config", () => z.boolean().nullable().optional());

export const WorkspaceConfigUpdateParamsSchema = lazySchema("appserver.workspace-config", () =>
  z.looseObject({
    model: nullableString,
    apiKey: nullableString,
    endPoint: nullableString,
    welcomeSuggestionsEnabled: nullableBoolean,
    skillsSelfLearningEnabled: nullableBoolean,
    memoryAutoConsolidateEnabled: nullableBoolean,
    /** `default` or `autoApprove`. */
    defaultApprovalPolicy: nullableString,
  }),
);
export type WorkspaceConfigUpdateParams = z.infer<typeof WorkspaceConfigUpdateParamsSchema>;

export const WorkspaceConfigUpdateResultSchema = lazySchema("appserver.workspace-config", () =>
  z.looseObject({
    model: z.string().nullable(),
    /** A server never echoes a key: it answers how the key is stored (a reference), or null. */
    apiKey: z.string().nullable(),
    endPoint: z.string().nullable(),
    welcomeSuggestionsEnabled: z.boolean().nullable(),
    skillsSelfLearningEnabled: z.boolean().nullable(),
    memoryAutoConsolidateEnabled: z.boolean().nullable(),
    defaultApprovalPolicy: z.string().nullable(),
  }),
);
export type WorkspaceConfigUpdateResult = z.infer<typeof WorkspaceConfigUpdateResultSchema>;

export const workspaceConfigMethods = {
  "workspace/config/schema": method(EmptyObjectSchema, WorkspaceConfigSchemaResultSchema),
  "workspace/config/update": method(WorkspaceConfigUpdateParamsSchema, WorkspaceConfigUpdateResultSchema),
} as const;
