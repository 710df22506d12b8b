/**
 * Every `nexo/admin/*` method with its params/result schemas, the one capability that gates it and
 * the domain it belongs to (admin-rpc spec, "Domains + methods"). The dispatcher, the SDK client
 * and the tests all read this table, so a method exists exactly when it is listed here.
 */
import type { z } from "zod";
import { type MethodSchema, method } from "../jsonrpc.js";
import * as agentEvents from "./agent-events.js";
import * as agents from "./agents.js";
import * as audit from "./audit.js";
import * as auth from "./auth.js";
import type { AdminCapability } from "./capabilities.js";
import * as channels from "./channels.js";
import * as credentials from "./credentials.js";
import * as escalations from "./escalations.js";
import * as llm from "./llm.js";
import * as llmProviders from "./llm-providers.js";
import * as mcp from "./mcp.js";
import * as memory from "./memory.js";
import * as meta from "./meta.js";
import * as microapps from "./microapps.js";
import * as pairing from "./pairing.js";
import * as plugins from "./plugins.js";
import * as processing from "./processing.js";
import * as secrets from "./secrets.js";
import * as skills from "./skills.js";
import * as tenants from "./tenants.js";
import * as whatsapp from "./whatsapp.js";

export const ADMIN_DOMAINS = [
  "agents",
  "credentials",
  "pairing",
  "llm_providers",
  "channels",
  "meta",
  "llm",
  "agent_events",
  "audit",
  "processing",
  "escalations",
  "skills",
  "tenants",
  "mcp",
  "plugins",
  "microapps",
  "memory",
  "secrets",
  "auth",
  "whatsapp",
] as const;
export type AdminDomain = (typeof ADMIN_DOMAINS)[number];

export interface AdminMethodSchema<
  P extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  C extends AdminCapability = AdminCapability,
> extends MethodSchema<P, R> {
  capability: C;
  domain: AdminDomain;
}

function gated<P extends z.ZodType, R extends z.ZodType, const C extends AdminCapability>(
  params: P,
  result: R,
  capability: C,
  domain: AdminDomain,
): AdminMethodSchema<P, R, C> {
  return { ...method(params, result), capability, domain };
}

export const adminMethods = {
  "nexo/admin/agents/list": gated(
    agents.AgentsListParamsSchema,
    agents.AgentsListResultSchema,
    "agents_crud",
    "agents",
  ),
  "nexo/admin/agents/get": gated(
    agents.AgentsGetParamsSchema,
    agents.AgentsGetResultSchema,
    "agents_crud",
    "agents",
  ),
  "nexo/admin/agents/upsert": gated(
    agents.AgentsUpsertParamsSchema,
    agents.AgentsUpsertResultSchema,
    "agents_crud",
    "agents",
  ),
  "nexo/admin/agents/delete": gated(
    agents.AgentsDeleteParamsSchema,
    agents.AgentsDeleteResultSchema,
    "agents_crud",
    "agents",
  ),

  "nexo/admin/credentials/list": gated(
    credentials.CredentialsListParamsSchema,
    credentials.CredentialsListResultSchema,
    "credentials_crud",
    "credentials",
  ),
  "nexo/admin/credentials/register": gated(
    credentials.CredentialsRegisterParamsSchema,
    credentials.CredentialsRegisterResultSchema,
    "credentials_crud",
    "credentials",
  ),
  "nexo/admin/credentials/revoke": gated(
    credentials.CredentialsRevokeParamsSchema,
    credentials.CredentialsRevokeResultSchema,
    "credentials_crud",
    "credentials",
  ),

  "nexo/admin/pairing/start": gated(
    pairing.PairingStartParamsSchema,
    pairing.PairingStartResultSchema,
    "pairing_initiate",
    "pairing",
  ),
  "nexo/admin/pairing/status": gated(
    pairing.PairingStatusParamsSchema,
    pairing.PairingStatusResultSchema,
    "pairing_initiate",
    "pairing",
  ),
  "nexo/admin/pairing/cancel": gated(
    pairing.PairingCancelParamsSchema,
    pairing.PairingCancelResultSchema,
    "pairing_initiate",
    "pairing",
  ),

  "nexo/admin/llm_providers/list": gated(
    llmProviders.LlmProvidersListParamsSchema,
    llmProviders.LlmProvidersListResultSchema,
    "llm_keys_crud",
    "llm_providers",
  ),
  "nexo/admin/llm_providers/upsert": gated(
    llmProviders.LlmProvidersUpsertParamsSchema,
    llmProviders.LlmProvidersUpsertResultSchema,
    "llm_keys_crud",
    "llm_providers",
  ),
  "nexo/admin/llm_providers/delete": gated(
    llmProviders.LlmProvidersDeleteParamsSchema,
    llmProviders.LlmProvidersDeleteResultSchema,
    "llm_keys_crud",
    "llm_providers",
  ),

  "nexo/admin/channels/list": gated(
    channels.ChannelsListParamsSchema,
    channels.ChannelsListResultSchema,
    "channels_crud",
    "channels",
  ),
  "nexo/admin/channels/approve": gated(
    channels.ChannelsApproveParamsSchema,
    channels.ChannelsApproveResultSchema,
    "channels_crud",
    "channels",
  ),
  "nexo/admin/channels/revoke": gated(
    channels.ChannelsRevokeParamsSchema,
    channels.ChannelsRevokeResultSchema,
    "channels_crud",
    "channels",
  ),
  "nexo/admin/channels/doctor": gated(
    channels.ChannelsDoctorParamsSchema,
    channels.ChannelsDoctorResultSchema,
    "channels_crud",
    "channels",
  ),

  "nexo/admin/reload": gated(meta.ReloadParamsSchema, meta.ReloadResultSchema, "agents_crud", "meta"),

  "nexo/admin/llm/complete": gated(
    llm.AdminLlmCompleteParamsSchema,
    llm.AdminLlmCompleteResultSchema,
    "llm_complete",
    "llm",
  ),

  "nexo/admin/agent_events/list": gated(
    agentEvents.AgentEventsListParamsSchema,
    agentEvents.AgentEventsListResultSchema,
    "transcripts_read",
    "agent_events",
  ),
  "nexo/admin/agent_events/read": gated(
    agentEvents.AgentEventsReadParamsSchema,
    agentEvents.AgentEventsReadResultSchema,
    "transcripts_read",
    "agent_events",
  ),
  "nexo/admin/agent_events/search": gated(
    agentEvents.AgentEventsSearchParamsSchema,
    agentEvents.AgentEventsSearchResultSchema,
    "transcripts_read",
    "agent_events",
  ),

  "nexo/admin/microapp_audit/tail": gated(
    audit.MicroappAuditTailParamsSchema,
    audit.MicroappAuditTailResultSchema,
    "audit_read",
    "audit",
  ),

  "nexo/admin/processing/pause": gated(
    processing.ProcessingPauseParamsSchema,
    processing.ProcessingAckSchema,
    "operator_intervention",
    "processing",
  ),
  "nexo/admin/processing/resume": gated(
    processing.ProcessingResumeParamsSchema,
    processing.ProcessingAckSchema,
    "operator_intervention",
    "processing",
  ),
  "nexo/admin/processing/intervention": gated(
    processing.ProcessingInterventionParamsSchema,
    processing.ProcessingAckSchema,
    "operator_intervention",
    "processing",
  ),
  "nexo/admin/processing/state": gated(
    processing.ProcessingStateParamsSchema,
    processing.ProcessingStateResultSchema,
    "operator_intervention",
    "processing",
  ),

  "nexo/admin/escalations/list": gated(
    escalations.EscalationsListParamsSchema,
    escalations.EscalationsListResultSchema,
    "escalations_read",
    "escalations",
  ),
  "nexo/admin/escalations/resolve": gated(
    escalations.EscalationsResolveParamsSchema,
    escalations.EscalationsResolveResultSchema,
    "escalations_resolve",
    "escalations",
  ),

  "nexo/admin/skills/list": gated(
    skills.SkillsListParamsSchema,
    skills.SkillsListResultSchema,
    "skills_crud",
    "skills",
  ),
  "nexo/admin/skills/get": gated(
    skills.SkillsGetParamsSchema,
    skills.SkillsGetResultSchema,
    "skills_crud",
    "skills",
  ),
  "nexo/admin/skills/upsert": gated(
    skills.SkillsUpsertParamsSchema,
    skills.SkillsUpsertResultSchema,
    "skills_crud",
    "skills",
  ),
  "nexo/admin/skills/delete": gated(
    skills.SkillsDeleteParamsSchema,
    skills.SkillsDeleteResultSchema,
    "skills_crud",
    "skills",
  ),

  "nexo/admin/tenants/list": gated(
    tenants.TenantsListParamsSchema,
    tenants.TenantsListResultSchema,
    "tenants_crud",
    "tenants",
  ),
  "nexo/admin/tenants/get": gated(
    tenants.TenantsGetParamsSchema,
    tenants.TenantsGetResultSchema,
    "tenants_crud",
    "tenants",
  ),
  "nexo/admin/tenants/upsert": gated(
    tenants.TenantsUpsertParamsSchema,
    tenants.TenantsUpsertResultSchema,
    "tenants_crud",
    "tenants",
  ),
  "nexo/admin/tenants/delete": gated(
    tenants.TenantsDeleteParamsSchema,
    tenants.TenantsDeleteResultSchema,
    "tenants_crud",
    "tenants",
  ),

  "nexo/admin/mcp/list": gated(mcp.McpListParamsSchema, mcp.McpListResultSchema, "mcp_crud", "mcp"),
  "nexo/admin/mcp/get": gated(mcp.McpGetParamsSchema, mcp.McpGetResultSchema, "mcp_crud", "mcp"),
  "nexo/admin/mcp/upsert": gated(mcp.McpUpsertParamsSchema, mcp.McpUpsertResultSchema, "mcp_crud", "mcp"),
  "nexo/admin/mcp/delete": gated(mcp.McpDeleteParamsSchema, mcp.McpDeleteResultSchema, "mcp_crud", "mcp"),

  "nexo/admin/plugins/doctor": gated(
    plugins.PluginsDoctorParamsSchema,
    plugins.PluginsDoctorResultSchema,
    "plugin_doctor",
    "plugins",
  ),
  "nexo/admin/plugins/restart": gated(
    plugins.PluginsRestartParamsSchema,
    plugins.PluginsRestartResultSchema,
    "plugin_restart",
    "plugins",
  ),

  // A nexo addition (NEXO_ADMIN_ADDITIONS): microapps' health beside the plugins'.
  "nexo/admin/microapps/list": gated(
    microapps.MicroappsListParamsSchema,
    microapps.MicroappsListResultSchema,
    "plugin_doctor",
    "microapps",
  ),
  // A nexo addition: the restart button for microapps, under the extension-restart grant.
  "nexo/admin/microapps/restart": gated(
    microapps.MicroappsRestartParamsSchema,
    microapps.MicroappsRestartResultSchema,
    "plugin_restart",
    "microapps",
  ),

  "nexo/admin/memory/query": gated(
    memory.AdminMemoryQueryParamsSchema,
    memory.AdminMemoryQueryResultSchema,
    "memory_query",
    "memory",
  ),
  "nexo/admin/memory/list_snapshots": gated(
    memory.MemoryListSnapshotsParamsSchema,
    memory.MemoryListSnapshotsResultSchema,
    "memory_snapshot",
    "memory",
  ),
  "nexo/admin/memory/delete_snapshot": gated(
    memory.MemoryDeleteSnapshotParamsSchema,
    memory.MemoryDeleteSnapshotResultSchema,
    "memory_snapshot",
    "memory",
  ),
  "nexo/admin/memory/create_snapshot": gated(
    memory.MemoryCreateSnapshotParamsSchema,
    memory.MemoryCreateSnapshotResultSchema,
    "memory_snapshot",
    "memory",
  ),
  "nexo/admin/memory/restore_snapshot": gated(
    memory.MemoryRestoreSnapshotParamsSchema,
    memory.MemoryRestoreSnapshotResultSchema,
    "memory_snapshot",
    "memory",
  ),

  "nexo/admin/secrets/write": gated(
    secrets.SecretsWriteParamsSchema,
    secrets.SecretsWriteResultSchema,
    "secrets_write",
    "secrets",
  ),

  "nexo/admin/auth/rotate_token": gated(
    auth.AuthRotateTokenParamsSchema,
    auth.AuthRotateTokenResultSchema,
    "auth_rotate",
    "auth",
  ),

  "nexo/admin/whatsapp/bot/list": gated(
    whatsapp.WhatsappBotListParamsSchema,
    whatsapp.WhatsappBotListResultSchema,
    "channels_crud",
    "whatsapp",
  ),
  "nexo/admin/whatsapp/bot/send": gated(
    whatsapp.WhatsappBotSendParamsSchema,
    whatsapp.WhatsappBotSendResultSchema,
    "channels_crud",
    "whatsapp",
  ),
} as const;

export type AdminMethodName = keyof typeof adminMethods;

/**
 * Methods nexo serves beyond the admin-rpc spec's table, each documented in docs/admin-rpc.md as a
 * nexo addition. Every other method of the table is a row of the spec.
 */
export const NEXO_ADMIN_ADDITIONS = [
  "nexo/admin/microapps/list",
  "nexo/admin/microapps/restart",
] as const satisfies readonly AdminMethodName[];
export type AdminParams<M extends AdminMethodName> = z.infer<(typeof adminMethods)[M]["params"]>;
export type AdminResult<M extends AdminMethodName> = z.infer<(typeof adminMethods)[M]["result"]>;

export const ADMIN_METHOD_NAMES = Object.keys(adminMethods) as AdminMethodName[];

/** True for a method this table knows (the dispatcher answers -32601 for any other). */
export function isAdminMethodName(name: string): name is AdminMethodName {
  return Object.hasOwn(adminMethods, name);
}

/** The capability that gates each method. */
export const adminMethodCapabilities = Object.fromEntries(
  ADMIN_METHOD_NAMES.map((name) => [name, adminMethods[name].capability]),
) as { readonly [M in AdminMethodName]: (typeof adminMethods)[M]["capability"] };

/**
 * Methods whose params carry `operator_token_hash`. The SDK overwrites that field on every call
 * with the hash of the operator it is authenticated as, whatever the caller put there.
 */
export const OPERATOR_STAMPED_METHODS = [
  "nexo/admin/processing/pause",
  "nexo/admin/processing/resume",
  "nexo/admin/processing/intervention",
  "nexo/admin/escalations/resolve",
] as const satisfies readonly AdminMethodName[];

export function isOperatorStampedMethod(name: string): boolean {
  return (OPERATOR_STAMPED_METHODS as readonly string[]).includes(name);
}
