/**
 * What the daemon's components share without owning: the registries plugin wrappers and MCP fill
 * (tools, providers, hooks, channels, vector backends) and the agents currently configured. They
 * have no start or stop of their own; a reload updates them in place.
 */
import { ChannelRegistry } from "../../channels/registry.js";
import { HookRunner } from "../../engine/hooks.js";
import { type LlmConfig, TenantProviders } from "../../engine/providers/llm-config.js";
import { ToolRegistry } from "../../engine/tools/registry.js";
import type { Logger } from "../../log.js";
import { VectorBackendRegistry } from "../../memory/vector.js";
import { LongTermMemory, type LongTermMemorySettings } from "../long-term-memory.js";
import type { Binding } from "../routing/bindings.js";
import type { AgentRuntimeSettings } from "../sessions.js";

export interface DaemonAgent extends AgentRuntimeSettings {
  active: boolean;
  bindings: Binding[];
  queueCap: number;
}

export class DaemonRegistries {
  readonly providers: TenantProviders;
  /** Tools every agent shares: plugins' and MCP servers'. */
  readonly tools = new ToolRegistry();
  readonly hooks: HookRunner;
  readonly channels = new ChannelRegistry();
  readonly vectors = new VectorBackendRegistry();
  /** The agents by id; replaced as a whole by a reload, so a turn sees one consistent set. */
  agents: ReadonlyMap<string, DaemonAgent>;
  /** memory.yaml, applied to sessions and to plugins' memory.recall; a reload updates it. */
  readonly longTermMemory: LongTermMemory;

  constructor(
    llm: LlmConfig,
    agents: readonly DaemonAgent[],
    logger: Logger,
    memory?: LongTermMemorySettings,
  ) {
    this.longTermMemory = new LongTermMemory(memory);
    this.providers = new TenantProviders(llm);
    this.hooks = new HookRunner((obj, msg) => logger.warn(obj, msg));
    this.agents = new Map(agents.map((agent) => [agent.id, agent]));
  }
}
