/**
 * `nexo/admin/tenants/*`: the tenants of a multi-tenant (SaaS) deployment, stored in
 * `config/tenants.yaml`. Agents, skills and LLM providers hang off a tenant by its id.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, JsonRecordSchema, NonEmptyStringSchema } from "./common.js";

/** Tenant ids end up in paths and yaml keys, so they are lowercase kebab-case. */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
/**
 * A fresh tenant id schema, for schemas built on use and let go (agents.yaml's and tenants.yaml's):
 * composing the kept {@link TenantKeySchema} would build it for good.
 */
export function tenantKeySchema() {
  return z.string().regex(TENANT_ID_PATTERN, {
    message: "tenant ids are 1-64 chars of a-z, 0-9 and '-', not starting with '-'",
  });
}
export const TenantKeySchema = lazySchema("admin.tenants", tenantKeySchema);

/** Set when the tenant is created through the admin RPC; absent for one written by hand without it. */
const CreatedAtSchema = lazySchema("admin.tenants", () => z.iso.datetime({ offset: true }).optional());

export const TenantSummarySchema = lazySchema("admin.tenants", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    display_name: z.string(),
    active: z.boolean(),
    /** Agents in agents.yaml that belong to this tenant. */
    agent_count: CountSchema,
    created_at: CreatedAtSchema,
  }),
);
export type TenantSummary = z.infer<typeof TenantSummarySchema>;

export const TenantDetailSchema = lazySchema("admin.tenants", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    display_name: z.string(),
    active: z.boolean(),
    created_at: CreatedAtSchema,
    /** Provider ids the tenant may use. */
    llm_provider_refs: z.array(z.string()).optional(),
    /** Operator notes the daemon stores without reading. */
    metadata: JsonRecordSchema.optional(),
  }),
);
export type TenantDetail = z.infer<typeof TenantDetailSchema>;

export const TenantsListParamsSchema = lazySchema("admin.tenants", () =>
  z
    .looseObject({
      active_only: z.boolean().optional(),
      prefix: z.string().optional(),
    })
    .optional(),
);
export type TenantsListParams = z.infer<typeof TenantsListParamsSchema>;

export const TenantsListResultSchema = lazySchema("admin.tenants", () =>
  z.looseObject({ tenants: z.array(TenantSummarySchema) }),
);
export type TenantsListResult = z.infer<typeof TenantsListResultSchema>;

export const TenantsGetParamsSchema = lazySchema("admin.tenants", () =>
  z.looseObject({ tenant_id: NonEmptyStringSchema }),
);
export type TenantsGetParams = z.infer<typeof TenantsGetParamsSchema>;

/** `tenant: null` is "not found", not an error. */
export const TenantsGetResultSchema = lazySchema("admin.tenants", () =>
  z.looseObject({ tenant: TenantDetailSchema.nullable() }),
);
export type TenantsGetResult = z.infer<typeof TenantsGetResultSchema>;

export const TenantsUpsertParamsSchema = lazySchema("admin.tenants", () =>
  z.looseObject({
    id: TenantKeySchema,
    display_name: z
      .string()
      .refine((n) => n.trim().length > 0, { message: "display_name must not be blank" }),
    active: z.boolean().optional(),
    llm_provider_refs: z.array(NonEmptyStringSchema).optional(),
    metadata: JsonRecordSchema.optional(),
  }),
);
export type TenantsUpsertParams = z.infer<typeof TenantsUpsertParamsSchema>;

export const TenantsUpsertResultSchema = lazySchema("admin.tenants", () =>
  z.looseObject({
    tenant: TenantDetailSchema,
    created: z.boolean(),
  }),
);
export type TenantsUpsertResult = z.infer<typeof TenantsUpsertResultSchema>;

export const TenantsDeleteParamsSchema = lazySchema("admin.tenants", () =>
  z.looseObject({
    tenant_id: NonEmptyStringSchema,
    /** Also delete the tenant's agents; without it a tenant that still owns agents is kept. */
    purge: z.boolean().optional(),
  }),
);
export type TenantsDeleteParams = z.infer<typeof TenantsDeleteParamsSchema>;

/** When the delete was refused, `orphaned_agents` lists the agents that still reference it. */
export const TenantsDeleteResultSchema = lazySchema("admin.tenants", () =>
  z.looseObject({
    removed: z.boolean(),
    orphaned_agents: z.array(z.string()).optional(),
  }),
);
export type TenantsDeleteResult = z.infer<typeof TenantsDeleteResultSchema>;
