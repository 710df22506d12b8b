/**
 * From a validated config directory to what the daemon runs: resolved agents, plugin dirs with
 * their operator settings, the broker, llm.yaml and mcp.yaml as they are.
 */
import type { PluginSettings } from "../extensions/plugins/manager.js";
import type { Logger } from "../log.js";
import type { DaemonConfig } from "./config/index.js";
import type { DaemonAgent, DaemonSpec } from "./daemon.js";

export function agentsFromConfig(config: DaemonConfig): DaemonAgent[] {
  return config.agents.map((agent) => ({
    id: agent.id,
    active: agent.active,
    ...(agent.tenant_id ? { tenantId: agent.tenant_id } : {}),
    provider: agent.model.provider,
    model: agent.model.model,
    ...(systemPromptOf(agent) ? { systemPrompt: systemPromptOf(agent) } : {}),
    maxTokens: agent.max_tokens,
    maxTurns: agent.max_turns,
    workspace: agent.workspace,
    ...(agent.allowed_tools ? { allowedTools: agent.allowed_tools } : {}),
    mode: agent.approval.mode,
    allow: agent.approval.allow,
    bindings: agent.inbound_bindings.map((b) => ({
      plugin: b.plugin,
      ...(b.instance ? { instance: b.instance } : {}),
    })),
    queueCap: agent.config.queue_cap,
  }));
}

function systemPromptOf(agent: DaemonConfig["agents"][number]): string | undefined {
  const parts = [
    agent.system_prompt?.trim(),
    agent.language ? `Always reply in ${agent.language}.` : undefined,
  ];
  const text = parts.filter(Boolean).join("\n\n");
  return text || undefined;
}

export function pluginsFromConfig(config: DaemonConfig): DaemonSpec["plugins"] {
  const dirs: string[] = [];
  const settings: Record<string, PluginSettings> = {};
  for (const entry of config.plugins.plugins) {
    if (!entry.enabled) continue;
    dirs.push(entry.dir);
    if (entry.manifest) {
      settings[entry.manifest.id] = {
        ...(entry.grants ? { grants: entry.grants } : {}),
        env: entry.env,
        passthroughEnv: entry.passthrough_env,
      };
    }
  }
  return { dirs, settings };
}

export function specFromConfig(config: DaemonConfig, env: NodeJS.ProcessEnv, logger: Logger): DaemonSpec {
  const sandbox = config.plugins.sandbox;
  return {
    stateDir: config.daemon.state_dir,
    agents: agentsFromConfig(config),
    llm: config.llm,
    broker: config.broker,
    plugins: pluginsFromConfig(config),
    mcp: config.mcp,
    shutdownGraceMs: config.daemon.shutdown_grace_ms,
    // The plugins.yaml sandbox policy reaches the plugin launcher as its documented variables.
    env: {
      ...env,
      ...(sandbox.require ? { NEXO_PLUGIN_SANDBOX_REQUIRE: "1" } : {}),
      ...(sandbox.allow_host_network ? { NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW: "1" } : {}),
    },
    logger,
  };
}
