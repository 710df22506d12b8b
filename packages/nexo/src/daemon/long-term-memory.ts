/**
 * memory.yaml as the daemon applies it. Agents get the store's long-term memory and the
 * memory_store / memory_recall tools (with the recall limits of the file) only while `enabled`;
 * plugins' `memory.recall` is refused while it is off. What is stored stays in the database either
 * way. A reload replaces the settings in place: sessions built after it (the daemon drops its
 * cached ones on every reload) and every later plugin call see the new ones.
 */
import type { MemoryToolOptions } from "../engine/tools/memory.js";
import type { AgentMemory, MemoryEntry } from "../engine/types.js";
import { DEFAULT_MEMORY_CONFIG, type MemoryConfig } from "./config/memory.js";

export type LongTermMemorySettings = MemoryConfig["long_term"];

/** A plugin asked for memory while memory.yaml turns it off. */
export class LongTermMemoryOffError extends Error {
  override readonly name = "LongTermMemoryOffError";
  constructor() {
    super("long-term memory is turned off on this daemon (memory.yaml: long_term.enabled is false)");
  }
}

export class LongTermMemory {
  private settings: LongTermMemorySettings;

  constructor(settings: LongTermMemorySettings = DEFAULT_MEMORY_CONFIG.long_term) {
    this.settings = settings;
  }

  update(settings: LongTermMemorySettings = DEFAULT_MEMORY_CONFIG.long_term): void {
    this.settings = settings;
  }

  /** The memory an agent session gets: the store's while enabled, none otherwise. */
  forAgents(store: AgentMemory): AgentMemory | undefined {
    return this.settings.enabled ? store : undefined;
  }

  /** The built-in memory tools' options, or `false`: no memory tools at all. */
  toolOptions(): MemoryToolOptions | false {
    if (!this.settings.enabled) return false;
    const { default_limit, max_limit } = this.settings.recall;
    return { defaultRecallLimit: default_limit, maxRecallLimit: max_limit };
  }

  /** What plugins' `memory.recall` reads: the store's memory, refusing while memory is off. */
  forPlugins(store: AgentMemory): AgentMemory {
    const gate = (): AgentMemory => {
      if (!this.settings.enabled) throw new LongTermMemoryOffError();
      return store;
    };
    return {
      store: (agentId: string, content: string, tags?: string[]): Promise<MemoryEntry> =>
        gate().store(agentId, content, tags),
      recall: (agentId: string, query: string, limit?: number): Promise<MemoryEntry[]> =>
        gate().recall(agentId, query, limit),
    };
  }
}
