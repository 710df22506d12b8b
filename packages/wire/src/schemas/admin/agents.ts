/**
 * `nexo/admin/agents/*`: CRUD over `agents.yaml`. Upsert replaces only the fields it carries; a
 * field left out keeps its on-disk value, which is why every upsert field but `id` is optional.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, NonEmptyStringSchema, TenantIdSchema } from "./common.js";

/** An inbound binding as `agents.yaml` lists it: `{plugin, instance?}`. */
export const AgentBindingSchema = lazySchema("admin.agents", () =>
  z.looseObject({
    plugin: NonEmptyStringSchema,
    instance: z.string().min(1).optional(),
  }),
);
export type AgentBinding = z.infer<typeof AgentBindingSchema>;

/** Provider id (a key of `llm.yaml` providers) plus the model name within it. */
export const AgentModelRefSchema = lazySchema("admin.agents", () =>
  z.looseObject({
    provider: NonEmptyStringSchema,
    model: NonEmptyStringSchema,
  }),
);
export type AgentModelRef = z.infer<typeof AgentModelRefSchema>;

export const AgentsListParamsSchema = lazySchema("admin.agents", () =>
  z
    .looseObject({
      /** Leave out agents whose `active` flag is false. */
      active_only: z.boolean().optional(),
      /** Only agents whose primary plugin is this one (e.g. `whatsapp`). */
      plugin_filter: z.string().min(1).optional(),
      tenant_id: TenantIdSchema.optional(),
    })
    .optional(),
);
export type AgentsListParams = z.infer<typeof AgentsListParamsSchema>;

export const AgentSummarySchema = lazySchema("admin.agents", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    active: z.boolean(),
    model_provider: z.string(),
    bindings_count: CountSchema,
  }),
);
export type AgentSummary = z.infer<typeof AgentSummarySchema>;

export const AgentsListResultSchema = lazySchema("admin.agents", () =>
  z.looseObject({ agents: z.array(AgentSummarySchema) }),
);
export type AgentsListResult = z.infer<typeof AgentsListResultSchema>;

export const AgentsGetParamsSchema = lazySchema("admin.agents", () =>
  z.looseObject({ agent_id: NonEmptyStringSchema }),
);
export type AgentsGetParams = z.infer<typeof AgentsGetParamsSchema>;

/** What `agents/get` and `agents/upsert` answer: the operator-relevant part of the yaml block. */
export const AgentDetailSchema = lazySchema("admin.agents", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    model: AgentModelRefSchema,
    active: z.boolean(),
    allowed_tools: z.array(z.string()),
    inbound_bindings: z.array(AgentBindingSchema),
    system_prompt: z.string(),
    language: z.string().optional(),
    tenant_id: z.string().nullable().optional(),
    description: z.string().optional(),
  }),
);
export type AgentDetail = z.infer<typeof AgentDetailSchema>;

export const AgentsGetResultSchema = AgentDetailSchema;
export type AgentsGetResult = AgentDetail;

export const AgentsUpsertParamsSchema = lazySchema("admin.agents", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    /** Required when the agent is new (the handler answers -32602 otherwise); kept when omitted. */
    model: AgentModelRefSchema.optional(),
    active: z.boolean().optional(),
    allowed_tools: z.array(z.string()).optional(),
    /** Replaces the whole binding list (the agent side of the many-to-many credential binding). */
    inbound_bindings: z.array(AgentBindingSchema).optional(),
    system_prompt: z.string().optional(),
    language: z.string().min(1).optional(),
    tenant_id: TenantIdSchema.optional(),
    description: z.string().optional(),
  }),
);
export type AgentsUpsertParams = z.infer<typeof AgentsUpsertParamsSchema>;

export const AgentsUpsertResultSchema = AgentDetailSchema;
export type AgentsUpsertResult = AgentDetail;

export const AgentsDeleteParamsSchema = lazySchema("admin.agents", () =>
  z.looseObject({ agent_id: NonEmptyStringSchema }),
);
export type AgentsDeleteParams = z.infer<typeof AgentsDeleteParamsSchema>;

/** `removed: false` means the agent was already absent (delete is idempotent). */
export const AgentsDeleteResultSchema = lazySchema("admin.agents", () =>
  z.looseObject({ removed: z.boolean() }),
);
export type AgentsDeleteResult = z.infer<typeof AgentsDeleteResultSchema>;
