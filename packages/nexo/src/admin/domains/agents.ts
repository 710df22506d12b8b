/**
 * `nexo/admin/agents/*` (agents_crud): agents.yaml through the daemon's services facade. Reads are
 * the file as written; upsert and delete are one comment-preserving edit of the agent's block,
 * checked against the whole config directory, then applied by a hot reload — the next message
 * already reaches the agent as changed. Upsert changes only the fields the call carries
 * (`inbound_bindings` replaces the whole list: the agent side of the many-to-many credential
 * bindings).
 */
import { InvalidParamsError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import type { AgentEntry, AgentPatch } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

/** The fields of an upsert that are agents.yaml keys of the same name. */
const UPSERT_FIELDS = [
  "model",
  "active",
  "allowed_tools",
  "inbound_bindings",
  "system_prompt",
  "language",
  "tenant_id",
  "description",
] as const;

export const agentsDomain = defineAdminDomain({
  domain: "agents",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/agents/list": (params) =>
        viaService(async () => {
          const agents = await daemon.agents.list({
            ...(params?.active_only ? { activeOnly: true } : {}),
            ...(params?.plugin_filter === undefined ? {} : { channel: params.plugin_filter }),
            ...(params?.tenant_id === undefined ? {} : { tenantId: params.tenant_id }),
          });
          return {
            agents: agents.map((agent) => ({
              id: agent.id,
              active: agent.active !== false,
              model_provider: agent.model.provider,
              bindings_count: agent.inbound_bindings?.length ?? 0,
            })),
          };
        }),

      "nexo/admin/agents/get": ({ agent_id }) =>
        viaService(async () => agentDetail(await daemon.agents.get(agent_id))),

      "nexo/admin/agents/upsert": (params) =>
        viaService(async () => {
          const patch: Record<string, unknown> = { id: params.id };
          for (const field of UPSERT_FIELDS) {
            if (params[field] !== undefined) patch[field] = params[field];
          }
          if (params.model === undefined && !(await daemon.agents.list()).some((a) => a.id === params.id))
            throw new InvalidParamsError(`invalid params: model: a new agent ("${params.id}") needs a model`);
          const { agent } = await daemon.agents.upsert(patch as AgentPatch);
          return agentDetail(agent);
        }),

      "nexo/admin/agents/delete": ({ agent_id }) =>
        viaService(async () => ({ removed: (await daemon.agents.delete(agent_id)).removed })),
    },
});

/** What agents/get and agents/upsert answer: the operator-relevant part of the agent's block. */
export function agentDetail(agent: AgentEntry): admin.AgentDetail {
  return {
    id: agent.id,
    model: { provider: agent.model.provider, model: agent.model.model },
    active: agent.active !== false,
    allowed_tools: agent.allowed_tools ?? [],
    inbound_bindings: (agent.inbound_bindings ?? []).map((binding) => ({ ...binding })),
    system_prompt: agent.system_prompt ?? "",
    ...(agent.language === undefined ? {} : { language: agent.language }),
    ...(agent.tenant_id === undefined ? {} : { tenant_id: agent.tenant_id }),
    ...(agent.description === undefined ? {} : { description: agent.description }),
  };
}
