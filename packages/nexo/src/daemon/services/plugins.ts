/**
 * Plugins: what the plugin manager runs, with each plugin's state, restarts and last error, and a
 * restart of one plugin (stop, read its manifest again, start, start its bound channels).
 */
import type { PluginStatus } from "../../extensions/plugins/manager.js";
import { NotFoundError } from "./errors.js";

export interface PluginsRuntime {
  status(): PluginStatus[];
  /** undefined when no plugin has that id. */
  restart(id: string): Promise<PluginStatus | undefined>;
}

export interface PluginRestartResult {
  /** The status just before the restart. */
  before: PluginStatus;
  /** The status once the new process started (or failed to). */
  after: PluginStatus;
  restartedAt: Date;
}

export class PluginsService {
  constructor(private readonly runtime: PluginsRuntime) {}

  /** Every plugin the daemon loaded (also the invalid and failed ones), in load order. */
  list(): PluginStatus[] {
    return this.runtime.status();
  }

  /** One plugin by id; NotFoundError when no plugin has it. */
  get(id: string): PluginStatus {
    const status = this.runtime.status().find((plugin) => plugin.id === id);
    if (status === undefined) throw new NotFoundError("plugin", id, "is loaded");
    return status;
  }

  /**
   * Restarts one plugin, also a failed one (it gets a fresh restart budget). Resolves with its
   * status afterwards whether the new process came up or not; look at `after.state`.
   */
  async restart(id: string): Promise<PluginRestartResult> {
    const before = this.get(id);
    const restartedAt = new Date();
    const after = await this.runtime.restart(id);
    if (after === undefined) throw new NotFoundError("plugin", id, "is loaded");
    return { before, after, restartedAt };
  }
}
