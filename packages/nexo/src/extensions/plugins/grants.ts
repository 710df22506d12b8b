/**
 * What one plugin may use of the daemon's services. A plugin calling `memory.recall` reads an
 * agent's long-term memory and `llm.complete` spends an operator's LLM budget, so neither is open
 * by default: the operator lists the agents and providers per plugin, or `"*"` for all.
 *
 * Denials are answered inside the reserved band (PluginHostCode): -32010 for memory, -32011 for a
 * provider, with `data` naming what was asked, so an SDK author can tell them from real failures.
 */
import { PluginHostCode, RpcError } from "@nexo/wire";
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";

/**
 * A plugin's grants as the operator writes them. Closed on purpose: a misspelt key would
 * otherwise read as "no grant" and leave the operator wondering why the plugin is refused.
 * Built on use and let go (disposableSchema): plugins.yaml is parsed at start and on reload; a
 * plugin's calls are checked against the parsed grants, never against this schema.
 */
export const PluginGrantsSchema = disposableSchema(buildPluginGrantsSchema);

/**
 * The grants schema, built fresh: plugins.yaml's schema composes this plain one inside its own
 * builder (daemon/config/plugins.ts), so that one build serves a whole parse and is freed with it.
 */
export function buildPluginGrantsSchema() {
  const grantList = z.union([z.literal("*"), z.array(z.string().min(1))]);
  return z.strictObject({
    memory_agents: grantList.optional(),
    llm_providers: grantList.optional(),
  });
}
export type PluginGrants = z.infer<typeof PluginGrantsSchema>;

/** The default: nothing. */
export const NO_GRANTS: Readonly<PluginGrants> = Object.freeze({});

function granted(list: "*" | readonly string[] | undefined, name: string): boolean {
  return list === "*" || (list?.includes(name) ?? false);
}

/** The plugin may not read this agent's memory. */
export class MemoryAccessDeniedError extends RpcError {
  constructor(pluginId: string, agentId: string) {
    super(
      PluginHostCode.memoryAccessDenied,
      `plugin "${pluginId}" has no grant for the memory of agent "${agentId}"`,
      { plugin_id: pluginId, agent_id: agentId, grant: "memory_agents" },
    );
    this.name = "MemoryAccessDeniedError";
  }
}

/** The plugin may not use this LLM provider. */
export class ProviderAccessDeniedError extends RpcError {
  constructor(pluginId: string, provider: string) {
    super(
      PluginHostCode.providerAccessDenied,
      `plugin "${pluginId}" has no grant for the LLM provider "${provider}"`,
      { plugin_id: pluginId, provider, grant: "llm_providers" },
    );
    this.name = "ProviderAccessDeniedError";
  }
}

export function checkMemoryGrant(grants: PluginGrants, pluginId: string, agentId: string): void {
  if (!granted(grants.memory_agents, agentId)) throw new MemoryAccessDeniedError(pluginId, agentId);
}

export function checkProviderGrant(grants: PluginGrants, pluginId: string, provider: string): void {
  if (!granted(grants.llm_providers, provider)) throw new ProviderAccessDeniedError(pluginId, provider);
}
