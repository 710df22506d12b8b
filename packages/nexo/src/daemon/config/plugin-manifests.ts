/**
 * The plugins plugins.yaml lists, looked at before anything starts: each enabled entry's directory
 * must exist and hold a valid manifest, no plugin may be listed twice (by path or by id), a
 * required sandbox must be one the manifest enables, and restart overrides must still make a
 * policy together with the manifest's. Problems in a manifest are reported at the
 * manifest's own lines; problems of an entry at the entry's lines in plugins.yaml.
 */
import { stat } from "node:fs/promises";
import { ConfigError, type ConfigIssue, type Env } from "../../config/index.js";
import type { Locator } from "../../config/locate.js";
import { type LoadedPluginManifest, loadPluginManifest } from "../../extensions/plugins/manifest.js";
import { type RestartConfig, restartOverrides } from "../../extensions/restart-config.js";
import { restartPolicyFromManifest } from "../../extensions/restart-policy.js";
import { readSandboxKnobs } from "../../extensions/sandbox.js";
import { type PluginsConfig, pluginEnvironment } from "./plugins.js";
import { issueAt } from "./sources.js";

export interface ManifestInspection {
  /** The entries, with `manifest` filled in for each enabled plugin that could be read. */
  readonly config: PluginsConfig;
  readonly issues: ConfigIssue[];
  /** False when an enabled plugin's manifest could not be read: what it provides is unknown. */
  readonly complete: boolean;
}

/** Reads every enabled plugin's manifest; never throws for a plugin's sake. */
export async function inspectPluginManifests(
  config: PluginsConfig,
  file: string,
  locate: Locator,
  env: Env,
): Promise<ManifestInspection> {
  const daemonEnv = pluginEnvironment(config.sandbox, env);
  const sandboxRequired = sandboxRequirement(config, daemonEnv);
  const issues: ConfigIssue[] = [];
  let complete = true;
  const byDir = new Map<string, number>();
  const byId = new Map<string, number>();

  const plugins = await Promise.all(
    config.plugins.map(async (entry, index) => {
      if (!entry.enabled) return entry;
      const dirPath = ["plugins", index, "dir"];
      const info = await stat(entry.dir).catch(() => undefined);
      if (info === undefined) {
        issues.push(
          issueAt(file, locate, dirPath, `no such plugin directory or manifest file: ${entry.dir}`),
        );
        complete = false;
        return entry;
      }
      try {
        const manifest = await loadPluginManifest(entry.dir, { env: daemonEnv });
        return { ...entry, manifest };
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        issues.push(...error.issues);
        complete = false;
        return entry;
      }
    }),
  );

  plugins.forEach((entry, index) => {
    if (!entry.enabled) return;
    const dirPath = ["plugins", index, "dir"];
    const key = entry.manifest?.file ?? entry.dir;
    const sameDir = byDir.get(key);
    if (sameDir !== undefined) {
      issues.push(issueAt(file, locate, dirPath, `the same plugin as plugins[${sameDir}] (${key})`));
      return;
    }
    byDir.set(key, index);
    const manifest = entry.manifest;
    if (manifest === undefined) return;
    const sameId = byId.get(manifest.id);
    if (sameId !== undefined) {
      issues.push(
        issueAt(file, locate, dirPath, `plugin id "${manifest.id}" is already loaded by plugins[${sameId}]`),
      );
    } else {
      byId.set(manifest.id, index);
    }
    if (sandboxRequired && manifest.manifest.plugin.sandbox?.enabled !== true) {
      issues.push(
        issueAt(
          file,
          locate,
          dirPath,
          `the sandbox is required (sandbox.require), but plugin "${manifest.id}" does not enable it ([plugin.sandbox] enabled = true in ${manifest.file})`,
        ),
      );
    }
    const delays = restartDelayProblem(manifest, entry.restart);
    if (delays !== undefined) issues.push(issueAt(file, locate, ["plugins", index, "restart"], delays));
  });
  return { config: { ...config, plugins }, issues, complete };
}

/**
 * The overrides are merged over the manifest's policy, so a longer first delay alone can end up
 * above the manifest's longest one, which the supervisor refuses when the plugin starts. Said here
 * instead, where the operator can fix it.
 */
function restartDelayProblem(
  manifest: LoadedPluginManifest,
  restart: RestartConfig | undefined,
): string | undefined {
  if (restart === undefined) return undefined;
  const policy = {
    ...restartPolicyFromManifest(manifest.manifest.plugin.supervisor),
    ...restartOverrides(restart),
  };
  if (policy.maxDelayMs >= policy.initialDelayMs) return undefined;
  return `initial_delay_ms (${policy.initialDelayMs}) is above the longest delay (${policy.maxDelayMs}, from the manifest of "${manifest.id}"); set max_delay_ms as well`;
}

/**
 * Whether the sandbox is required, from the file or the environment. A malformed environment
 * value is the plugin host's to report (it refuses to start plugins under it); here it simply
 * does not count as "required".
 */
function sandboxRequirement(config: PluginsConfig, env: Env): boolean {
  if (config.sandbox.require) return true;
  try {
    return readSandboxKnobs(env).require;
  } catch {
    return false;
  }
}
