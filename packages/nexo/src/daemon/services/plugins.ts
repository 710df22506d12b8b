/**
 * Plugins: what the plugin manager runs, with each plugin's state, restarts and last error, and a
 * restart of one plugin (stop, read its manifest again, start, start its bound channels); and the
 * entries of plugins.yaml, enabled or not, each with its manifest read, which `setEnabled` switches
 * on or off with a comment-preserving edit of the entry's `enabled` key, applied by a reload.
 */
import { resolve } from "node:path";
import { ConfigError } from "../../config/index.js";
import type { PluginStatus } from "../../extensions/plugins/manager.js";
import { type LoadedPluginManifest, loadPluginManifest } from "../../extensions/plugins/manifest.js";
import { PluginsFileSchema, pluginEnvironment } from "../config/plugins.js";
import type { ReloadReport } from "../types.js";
import type { ConfigFiles } from "./config-files.js";
import { NotFoundError } from "./errors.js";

/** One entry of plugins.yaml with what its manifest says and what runs of it. */
export interface ConfiguredPlugin {
  /** The manifest's plugin id; the entry's `dir` when the manifest cannot be read. */
  id: string;
  /** The entry's `dir` resolved against the config directory. */
  dir: string;
  enabled: boolean;
  /** undefined when the manifest cannot be read (`problem` says why). */
  manifest: LoadedPluginManifest | undefined;
  problem: string | undefined;
  /** The plugin manager's view; undefined when no process of it is known here. */
  status: PluginStatus | undefined;
}

export interface PluginSetEnabledResult {
  plugin: ConfiguredPlugin;
  changed: boolean;
  reload: ReloadReport | undefined;
}

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
  constructor(
    private readonly runtime: PluginsRuntime,
    private readonly files: ConfigFiles,
  ) {}

  /** Every entry of plugins.yaml in file order, disabled ones included, each with its manifest. */
  async configured(): Promise<ConfiguredPlugin[]> {
    const file = PluginsFileSchema.parse((await this.files.read("plugins", PluginsFileSchema)) ?? {});
    const env = pluginEnvironment(file.sandbox, await this.files.substitutionEnv());
    const statuses = this.runtime.status();
    return Promise.all(
      file.plugins.map(async (entry) => {
        const dir = resolve(this.files.dir, entry.dir);
        let manifest: LoadedPluginManifest | undefined;
        let problem: string | undefined;
        try {
          manifest = await loadPluginManifest(dir, { env });
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          problem = error.message;
        }
        const id = manifest?.id ?? entry.dir;
        const status = statuses.find((candidate) => candidate.id === id);
        return { id, dir, enabled: entry.enabled, manifest, problem, status };
      }),
    );
  }

  /**
   * Sets the `enabled` key of the plugins.yaml entry whose manifest has plugin id `id` (every other
   * line and comment kept); the reload that follows starts or stops the plugin before this
   * resolves. NotFoundError when no entry has that id; InvalidConfigError (nothing written) when
   * the plugin cannot be enabled as it is (its manifest is broken, say).
   */
  async setEnabled(id: string, enabled: boolean): Promise<PluginSetEnabledResult> {
    const index = (await this.configured()).findIndex((plugin) => plugin.id === id);
    if (index < 0) throw new NotFoundError("plugin", id, "in plugins.yaml");
    const edit = await this.files.edit("plugins", (doc) => {
      const path = ["plugins", index, "enabled"];
      // `enabled` defaults to true: enabling an entry without the key leaves it as written.
      if (enabled && !doc.hasIn(path)) return;
      if (doc.getIn(path) !== enabled) doc.setIn(path, enabled);
    });
    const plugin = (await this.configured())[index];
    if (plugin === undefined) throw new NotFoundError("plugin", id, "in plugins.yaml");
    return { plugin, changed: edit.changed, reload: edit.reload };
  }

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
