/**
 * From a validated config directory to what the daemon runs: resolved agents, plugin dirs with
 * their operator settings, the broker, llm.yaml and mcp.yaml as they are, the health listener, and
 * the directory itself (for the services' edits and for reloads).
 */
import type { Logger } from "../log.js";
import type { DaemonAgent } from "./components/registries.js";
import { agentSystemPrompt, type DaemonConfig, pluginEnvironment, pluginLaunchPlan } from "./config/index.js";
import { idleTrimEnabled } from "./idle-trim.js";
import type { DaemonSpec } from "./types.js";

export function agentsFromConfig(config: DaemonConfig): DaemonAgent[] {
  return config.agents.map((agent) => {
    const systemPrompt = agentSystemPrompt(agent);
    return {
      id: agent.id,
      active: agent.active,
      ...(agent.tenant_id ? { tenantId: agent.tenant_id } : {}),
      provider: agent.model.provider,
      model: agent.model.model,
      ...(systemPrompt ? { systemPrompt } : {}),
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
    };
  });
}

/**
 * The enabled plugins by directory (how the daemon names them in reload reports) with their
 * operator settings by plugin id, from plugins.yaml's launch plan.
 */
export function pluginsFromConfig(config: DaemonConfig): DaemonSpec["plugins"] {
  const dirs = config.plugins.plugins
    .filter((entry) => entry.enabled && entry.manifest)
    .map((entry) => entry.dir);
  return { dirs, settings: pluginLaunchPlan(config.plugins).settings };
}

/**
 * The spec of a config directory. `env` is the environment its `${VAR}`s were read with; the
 * daemon reads the directory again with it on every reload.
 */
export function specFromConfig(config: DaemonConfig, env: NodeJS.ProcessEnv, logger: Logger): DaemonSpec {
  const { http } = config.daemon;
  return {
    stateDir: config.daemon.state_dir,
    agents: agentsFromConfig(config),
    llm: config.llm,
    broker: config.broker,
    plugins: pluginsFromConfig(config),
    mcp: config.mcp,
    memory: config.memory.long_term,
    microapps: config.microapps,
    shutdownGraceMs: config.daemon.shutdown_grace_ms,
    agentEventRetentionDays: config.daemon.agent_events.retention_days,
    // The plugins.yaml sandbox policy reaches the plugin launcher as its documented variables.
    env: pluginEnvironment(config.plugins.sandbox, env),
    logger,
    idleTrim: idleTrimEnabled(env),
    ...(http.enabled
      ? { http: { host: http.host, port: http.port, ...(http.token ? { token: http.token } : {}) } }
      : {}),
    source: { dir: config.dir, env },
  };
}
