/**
 * `nexo/admin/channels/*` (channels_crud): which MCP servers an operator approved as channels into
 * an agent — `agents.yaml.<agent>.channels.approved: [{server_name, allowlist?}]`, `allowlist`
 * naming the agent's inbound binding indices the approval is for (absent: all). Approve is
 * idempotent (the same entry again changes nothing; a new allowlist replaces the old one), revoke
 * removes one entry; both are comment-preserving agents.yaml edits followed by a hot reload.
 * `doctor` is static: it checks each approval against mcp.yaml (the server exists, is enabled) and
 * the agent's bindings (every allowlisted index exists).
 */
import { isDeepStrictEqual } from "node:util";
import type { admin } from "@nexo/wire/schemas";
import type { AgentEntry, DaemonServices } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

type Approval = NonNullable<AgentEntry["channels"]>["approved"] extends (infer A)[] | undefined ? A : never;

export const channelsDomain = defineAdminDomain({
  domain: "channels",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/channels/list": (params) =>
        viaService(async () => ({
          entries: (await agentsOf(daemon, params?.agent_id)).flatMap((agent) =>
            approvalsOf(agent).map((approval) => entryOf(agent.id, approval)),
          ),
        })),

      "nexo/admin/channels/approve": ({ agent_id, server_name, allowlist }) =>
        viaService(async () => {
          const agent = await daemon.agents.get(agent_id);
          const approved = approvalsOf(agent);
          const wanted: Approval = { server_name, ...(allowlist === undefined ? {} : { allowlist }) };
          const index = approved.findIndex((approval) => approval.server_name === server_name);
          if (index >= 0 && isDeepStrictEqual(approved[index], wanted)) return entryOf(agent_id, wanted);
          const next = index >= 0 ? approved.with(index, wanted) : [...approved, wanted];
          await daemon.agents.upsert({ id: agent_id, channels: { approved: next } });
          return entryOf(agent_id, wanted);
        }),

      "nexo/admin/channels/revoke": ({ agent_id, server_name }) =>
        viaService(async () => {
          const agent = (await daemon.agents.list()).find((candidate) => candidate.id === agent_id);
          const approved = agent === undefined ? [] : approvalsOf(agent);
          const next = approved.filter((approval) => approval.server_name !== server_name);
          if (next.length === approved.length) return { removed: false };
          await daemon.agents.upsert({ id: agent_id, channels: next.length > 0 ? { approved: next } : null });
          return { removed: true };
        }),

      "nexo/admin/channels/doctor": (params) =>
        viaService(async () => {
          const servers = new Map((await daemon.mcp.list()).map((server) => [server.name, server]));
          const verdicts: admin.ChannelDoctorVerdict[] = [];
          for (const agent of await agentsOf(daemon, params?.agent_id)) {
            const bindings = agent.inbound_bindings?.length ?? 0;
            for (const approval of approvalsOf(agent)) {
              const index = params?.binding_index;
              if (
                index !== undefined &&
                approval.allowlist !== undefined &&
                !approval.allowlist.includes(index)
              )
                continue;
              verdicts.push({
                agent_id: agent.id,
                server_name: approval.server_name,
                ...verdictOf(approval, servers.get(approval.server_name), bindings),
              });
            }
          }
          return { verdicts };
        }),
    },
});

async function agentsOf(daemon: DaemonServices, agentId: string | undefined): Promise<AgentEntry[]> {
  const agents = await daemon.agents.list();
  return agentId === undefined ? agents : agents.filter((agent) => agent.id === agentId);
}

function approvalsOf(agent: AgentEntry): Approval[] {
  return agent.channels?.approved ?? [];
}

function entryOf(agentId: string, approval: Approval): admin.ChannelEntry {
  return {
    agent_id: agentId,
    server_name: approval.server_name,
    ...(approval.allowlist === undefined ? {} : { allowlist: approval.allowlist }),
  };
}

function verdictOf(
  approval: Approval,
  server: { entry: { enabled?: boolean | undefined } } | undefined,
  bindings: number,
): Pick<admin.ChannelDoctorVerdict, "status" | "message"> {
  if (server === undefined)
    return { status: "error", message: `no server "${approval.server_name}" in mcp.yaml` };
  if (server.entry.enabled === false)
    return { status: "warning", message: `"${approval.server_name}" is disabled in mcp.yaml` };
  const missing = (approval.allowlist ?? []).filter((index) => index >= bindings);
  if (missing.length > 0)
    return {
      status: "warning",
      message: `the agent has ${bindings} inbound binding(s); allowlisted index ${missing.join(", ")} does not exist`,
    };
  return { status: "ok", message: "approved; the server is configured" };
}
