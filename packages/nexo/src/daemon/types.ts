/**
 * The daemon's vocabulary: the spec it runs (built from a config directory by spec.ts), what a
 * reload reports, and the summary of the ready line.
 */
import type { BrokerConfigInput } from "../broker/config.js";
import type { LlmConfig } from "../engine/providers/llm-config.js";
import type { McpConfig } from "../extensions/mcp/config.js";
import type { MicroappDefinition } from "../extensions/microapps/definition.js";
import type { MicroappStatus } from "../extensions/microapps/manager.js";
import type { PluginSettings, PluginStatus } from "../extensions/plugins/manager.js";
import type { Logger } from "../log.js";
import type { McpChanges } from "./components/mcp.js";
import type { DaemonAgent } from "./components/registries.js";
import type { LongTermMemorySettings } from "./long-term-memory.js";
import type { Metrics } from "./metrics.js";

/** Everything the daemon runs, already validated (the config loader builds it from the config dir). */
export interface DaemonSpec {
  stateDir: string;
  agents: DaemonAgent[];
  llm: LlmConfig;
  broker: BrokerConfigInput;
  plugins: { dirs: string[]; settings: Record<string, PluginSettings> };
  mcp?: McpConfig;
  /** memory.yaml's long-term memory settings; on, with the default recall limits, when absent. */
  memory?: LongTermMemorySettings;
  /** extensions.yaml's microapps; none when absent. */
  microapps?: MicroappDefinition[];

  /** How long in-flight turns may run on after a shutdown request. Default 10 s. */
  shutdownGraceMs?: number;
  /** daemon.yaml `agent_events.retention_days`: older agent events are deleted. Default 30. */
  agentEventRetentionDays?: number;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where turns, tool calls, LLM latency and queue depths are counted; one is made when absent. */
  metrics?: Metrics;
  /**
   * Run a memory-reducing collection each time the daemon goes idle (daemon/idle-trim.ts). Off
   * when absent; `nexo start` turns it on unless NEXO_IDLE_TRIM=off.
   */
  idleTrim?: boolean;
  /** The health listener (/healthz, /readyz, /metrics); none when absent. */
  http?: { host: string; port: number; token?: string };
  /**
   * The config directory the spec was read from, with the environment its `${VAR}`s were read
   * with. The services edit it, a reload reads it again; with `watch` (default true), changes on
   * disk are reloaded as they happen, `debounceMs` (default 300) after the last one.
   */
  source?: { dir: string; env: NodeJS.ProcessEnv; watch?: boolean; debounceMs?: number };
}

/** What a reload changed among the microapps, by id. */
export interface MicroappChanges {
  added: string[];
  removed: string[];
  /** Restarted because their entry, executable or plugin.toml changed. */
  restarted: string[];
}

/** What a reload changed, and what it could not change without a restart. */
export interface ReloadReport {
  agents: { added: string[]; removed: string[]; changed: string[] };
  plugins: { added: string[]; removed: string[] };
  mcp: McpChanges;
  microapps: MicroappChanges;
  providersReloaded: boolean;
  /** Settings that changed but only take effect after a restart (the broker, the state dir, http). */
  needsRestart: string[];
}

export interface DaemonSummary {
  version: string;
  agents: string[];
  bindings: number;
  plugins: Array<Pick<PluginStatus, "id" | "state">>;
  microapps: Array<Pick<MicroappStatus, "id" | "state">>;
  channels: string[];
  broker: string;
  mcpServers: number;
  /** Where /healthz, /readyz and /metrics answer; absent when the listener is off. */
  http?: string;
}
