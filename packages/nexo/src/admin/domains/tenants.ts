/**
 * `nexo/admin/tenants/*` (tenants_crud): tenants.yaml through the daemon's services facade, each
 * tenant with how many agents of agents.yaml belong to it. Upsert is one comment-preserving edit
 * (a new tenant is stamped with `created_at`), checked against the whole directory — a
 * `llm_provider_refs` naming a provider the tenant does not have is -32602 with the located
 * problem — then a hot reload. Delete keeps a tenant that agents still belong to
 * (`removed: false`, `orphaned_agents`) unless `purge`: then its agents, its own llm.yaml providers
 * and its skills go with it.
 */
import type { admin } from "@nexo/wire/schemas";
import type { TenantPatch, TenantRecord } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const tenantsDomain = defineAdminDomain({
  domain: "tenants",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/tenants/list": (params) =>
        viaService(async () => {
          const tenants = await daemon.tenants.list({
            ...(params?.active_only ? { activeOnly: true } : {}),
            ...(params?.prefix === undefined ? {} : { prefix: params.prefix }),
          });
          return {
            tenants: tenants.map(({ entry, agentCount }) => ({
              id: entry.id,
              display_name: entry.display_name ?? entry.id,
              active: entry.active !== false,
              agent_count: agentCount,
              ...(entry.created_at === undefined ? {} : { created_at: entry.created_at }),
            })),
          };
        }),

      "nexo/admin/tenants/get": ({ tenant_id }) =>
        viaService(async () => {
          const found = (await daemon.tenants.list()).find((tenant) => tenant.entry.id === tenant_id);
          return { tenant: found === undefined ? null : tenantDetail(found) };
        }),

      "nexo/admin/tenants/upsert": (params) =>
        viaService(async () => {
          const patch: TenantPatch = { id: params.id, display_name: params.display_name };
          if (params.active !== undefined) patch.active = params.active;
          if (params.llm_provider_refs !== undefined) patch.llm_provider_refs = params.llm_provider_refs;
          if (params.metadata !== undefined) patch.metadata = params.metadata;
          const { tenant, created } = await daemon.tenants.upsert(patch);
          return { tenant: tenantDetail(tenant), created };
        }),

      "nexo/admin/tenants/delete": ({ tenant_id, purge }) =>
        viaService(async () => {
          const result = await daemon.tenants.delete(tenant_id, { purge: purge === true });
          return {
            removed: result.removed,
            ...(result.orphanedAgents.length > 0 ? { orphaned_agents: result.orphanedAgents } : {}),
            // A loose field: what a purge took with it.
            ...(result.purgedAgents.length > 0 ? { purged_agents: result.purgedAgents } : {}),
          };
        }),
    },
});

function tenantDetail({ entry }: TenantRecord): admin.TenantDetail {
  return {
    id: entry.id,
    display_name: entry.display_name ?? entry.id,
    active: entry.active !== false,
    ...(entry.created_at === undefined ? {} : { created_at: entry.created_at }),
    llm_provider_refs: entry.llm_provider_refs ?? [],
    metadata: (entry.metadata ?? {}) as Record<string, unknown>,
  };
}
