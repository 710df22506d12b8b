/**
 * `nexo/admin/llm_providers/*`: entries of `llm.yaml` — global `providers.<id>` or per-tenant
 * `tenants.<tenant_id>.providers.<id>` when `tenant_id` is set. API keys are referenced, never
 * returned: by env var name, by secret-store id, or written through once as a secret value.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { NonEmptyStringSchema, TenantIdSchema } from "./common.js";

export const LlmProvidersListParamsSchema = lazySchema("admin.llm-providers", () =>
  z
    .looseObject({
      /** Set: that tenant's providers only. Absent: the global table only. */
      tenant_id: TenantIdSchema.optional(),
    })
    .optional(),
);
export type LlmProvidersListParams = z.infer<typeof LlmProvidersListParamsSchema>;

export const LlmProviderSummarySchema = lazySchema("admin.llm-providers", () =>
  z.looseObject({
    id: NonEmptyStringSchema,
    base_url: z.string(),
    /** The env var NAME holding the key (never its value); empty when the key is in the secret store. */
    api_key_env: z.string(),
    /** The owning tenant for per-tenant rows; absent for global ones. */
    tenant_scope: z.string().min(1).optional(),
  }),
);
export type LlmProviderSummary = z.infer<typeof LlmProviderSummarySchema>;

export const LlmProvidersListResultSchema = lazySchema("admin.llm-providers", () =>
  z.looseObject({ providers: z.array(LlmProviderSummarySchema) }),
);
export type LlmProvidersListResult = z.infer<typeof LlmProvidersListResultSchema>;

const KEY_SOURCES = ["api_key_env", "api_key_secret_id", "api_key_secret_value"] as const;

export const LlmProvidersUpsertParamsSchema = lazySchema("admin.llm-providers", () =>
  z
    .looseObject({
      /** The provider instance id (may differ from the factory, see `factory_type`). */
      id: NonEmptyStringSchema,
      base_url: NonEmptyStringSchema,
      api_key_env: z.string().optional(),
      api_key_secret_id: NonEmptyStringSchema.optional(),
      /** Written to the secret store by the daemon; redacted from the audit log. */
      api_key_secret_value: NonEmptyStringSchema.optional(),
      headers: z.record(z.string(), z.string()).optional(),
      /** The factory that serves this instance; absent means the id names the factory. */
      factory_type: NonEmptyStringSchema.optional(),
      tenant_id: TenantIdSchema.optional(),
    })
    .superRefine((params, ctx) => {
      // A key from two places would leave it ambiguous which one the client reads.
      const given = KEY_SOURCES.filter((k) => params[k] !== undefined && params[k] !== "");
      if (given.length > 1) {
        ctx.addIssue({
          code: "custom",
          path: [given[1] ?? "api_key_env"],
          message: `the API key must come from one source, got ${given.join(" and ")}`,
        });
      }
    }),
);
export type LlmProvidersUpsertParams = z.infer<typeof LlmProvidersUpsertParamsSchema>;

export const LlmProvidersUpsertResultSchema = LlmProviderSummarySchema;
export type LlmProvidersUpsertResult = LlmProviderSummary;

/** The daemon refuses (error) to delete a provider an agent still uses. */
export const LlmProvidersDeleteParamsSchema = lazySchema("admin.llm-providers", () =>
  z.looseObject({
    provider_id: NonEmptyStringSchema,
    tenant_id: TenantIdSchema.optional(),
  }),
);
export type LlmProvidersDeleteParams = z.infer<typeof LlmProvidersDeleteParamsSchema>;

export const LlmProvidersDeleteResultSchema = lazySchema("admin.llm-providers", () =>
  z.looseObject({ removed: z.boolean() }),
);
export type LlmProvidersDeleteResult = z.infer<typeof LlmProvidersDeleteResultSchema>;
