/**
 * `tenants.yaml`: the tenants of a multi-tenant deployment. Agents (`tenant_id`) and llm.yaml's
 * tenant-scoped providers hang off these ids. The admin RPC (`nexo/admin/tenants/*`) edits this
 * file too, so every key it writes (`created_at`, `llm_provider_refs`) is accepted here.
 *
 * Without the file nexo is single-tenant and any well-formed tenant id may be used; with it, every
 * tenant id used elsewhere in the config dir must be listed here.
 */
import * as admin from "@nexo/wire/schemas/admin";
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";

/**
 * tenants.yaml's schemas, built on use and freed once no parse holds them (config/disposable-schema.ts):
 * the file is parsed at start, on reload and by the admin services' edits, never at idle.
 */
function buildSchemas() {
  const TenantSchema = z.strictObject({
    /** A tenant id as agents.yaml spells it too: the admin RPC's rule, built with this schema and freed with it. */
    id: admin.tenantKeySchema(),
    display_name: z.string().optional(),
    /** An inactive tenant stays in the file; what that means for its agents is the daemon's call. */
    active: z.boolean().default(true),
    /** Set by the admin RPC when it creates the tenant. */
    created_at: z.iso
      .datetime({ offset: true, error: "expected an ISO 8601 date-time, e.g. 2024-05-01T10:00:00Z" })
      .optional(),
    /** Provider names the tenant may use; each must exist for the tenant in llm.yaml. */
    llm_provider_refs: z.array(z.string().min(1)).optional(),
    /** Operator notes; nexo stores them without reading them. */
    metadata: z.record(z.string(), z.unknown()).optional(),
  });

  const TenantsFileSchema = z.strictObject({ tenants: z.array(TenantSchema).default([]) }).superRefine(
    (file, ctx) => {
      // Also run when some entry has other problems, so a duplicate is reported in the same pass;
      // the value may then be partly unparsed (even null), hence the defensive reading.
      const first = new Map<string, number>();
      idsOf(file).forEach((id, index) => {
        if (id === undefined) return;
        const earlier = first.get(id);
        if (earlier === undefined) first.set(id, index);
        else
          ctx.addIssue({
            code: "custom",
            path: ["tenants", index, "id"],
            message: `duplicate tenant id "${id}" (also tenants[${earlier}])`,
          });
      });
    },
    { when: () => true },
  );

  return { TenantSchema, TenantsFileSchema };
}
export const TenantSchema = disposableSchema(() => buildSchemas().TenantSchema);
export const TenantsFileSchema = disposableSchema(() => buildSchemas().TenantsFileSchema);
export type TenantConfig = z.output<typeof TenantSchema>;

/** Each entry's id, when it is a string, from a file value that may not have passed the schema. */
function idsOf(file: unknown): (string | undefined)[] {
  const list =
    typeof file === "object" && file !== null ? (file as { tenants?: unknown }).tenants : undefined;
  if (!Array.isArray(list)) return [];
  return list.map((tenant: unknown) => {
    const id = typeof tenant === "object" && tenant !== null ? (tenant as { id?: unknown }).id : undefined;
    return typeof id === "string" ? id : undefined;
  });
}

export type TenantsFile = z.output<typeof TenantsFileSchema>;
