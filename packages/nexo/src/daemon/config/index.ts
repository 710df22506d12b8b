/**
 * The daemon's config directory: one module per file (agents, broker, daemon, memory, plugins,
 * tenants; llm.yaml and mcp.yaml reuse their subsystems' schemas) and the loader that reads them
 * all and checks the names they share.
 */
export {
  AGENT_ID_PATTERN,
  type AgentConfig,
  AgentsFileSchema,
  agentSystemPrompt,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  DEFAULT_QUEUE_CAP,
  describeBinding,
  type InboundBinding,
  type ResolvedAgent,
  toolAllowed,
} from "./agents.js";
export { BrokerFileSchema, DEFAULT_BROKER_CONFIG } from "./broker.js";
export {
  DaemonFileSchema,
  type DaemonSettings,
  DEFAULT_HTTP_BIND,
  DEFAULT_SHUTDOWN_GRACE_MS,
  isLoopbackHost,
  parseBind,
} from "./daemon.js";
export { ExtensionsFileSchema, inspectMicroapps, type MicroappsInspection } from "./extensions.js";
export {
  type DaemonConfig,
  DaemonConfigError,
  type DaemonConfigReport,
  inspectDaemonConfig,
  type LoadDaemonConfigOptions,
  loadDaemonConfig,
} from "./load.js";
export { DEFAULT_MEMORY_CONFIG, type MemoryConfig, MemoryFileSchema } from "./memory.js";
export {
  type PluginLaunchSettings,
  type PluginsConfig,
  PluginsFileSchema,
  pluginEnvironment,
  pluginLaunchPlan,
  type ResolvedPluginEntry,
} from "./plugins.js";
export { formatWarning, summarizeConfig } from "./report.js";
export { type ConfigWarning, KNOWN_FILES, type KnownFile } from "./sources.js";
export { type TenantConfig, TenantsFileSchema } from "./tenants.js";
