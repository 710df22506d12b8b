/**
 * `plugins.yaml`: which plugin directories the daemon loads, and what the operator decides per
 * plugin — its grants (whose memory, which LLM providers), extra environment, variables passed
 * through from the daemon's environment, restart policy overrides — plus the sandbox policy for
 * all of them.
 *
 * The plugin's own manifest (nexo-plugin.toml) is read by the loader too, so `nexo config
 * validate` catches a broken plugin before the daemon starts, and so the settings here can be
 * handed to the PluginManager keyed by plugin id, as it expects.
 */
import { resolve } from "node:path";
import * as plugin from "@nexo/wire/schemas/plugin";
import { z } from "zod";
import { disposableSchema } from "../../config/disposable-schema.js";
import type { Env } from "../../config/index.js";
import { ScalarTextSchema } from "../../config/scalar-text.js";
import { buildPluginGrantsSchema } from "../../extensions/plugins/grants.js";
import type { PluginSettings } from "../../extensions/plugins/manager.js";
import type { LoadedPluginManifest } from "../../extensions/plugins/manifest.js";
import { RestartConfigSchema, restartOverrides } from "../../extensions/restart-config.js";
import type { RestartPolicy } from "../../extensions/restart-policy.js";
import { SANDBOX_HOST_NET_ALLOW_VAR, SANDBOX_REQUIRE_VAR } from "../../extensions/sandbox.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = plugin.RESERVED_ENV_PREFIX;

/** Why `name` cannot be given to a plugin as a variable, or undefined when it can. */
function envNameProblem(name: string): string | undefined {
  if (!ENV_NAME.test(name))
    return `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`;
  if (name.startsWith(RESERVED))
    return `"${name}" is reserved: variables beginning with ${RESERVED} belong to the daemon`;
  return undefined;
}

/**
 * plugins.yaml's schemas, built on use and freed once no parse holds them (config/disposable-schema.ts):
 * the file is parsed at start, on reload and by the admin services' edits, never at idle.
 */
function buildSchemas() {
  const PluginEnvSchema = z.record(z.string(), ScalarTextSchema).superRefine((env, ctx) => {
    for (const key of Object.keys(env)) {
      const problem = envNameProblem(key);
      if (problem !== undefined) ctx.addIssue({ code: "custom", path: [key], message: problem });
    }
  });

  const PassthroughNameSchema = z.string().superRefine((name, ctx) => {
    const problem = envNameProblem(name);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
  });

  const PluginEntrySchema = z.strictObject({
    /** The plugin directory (or its nexo-plugin.toml); relative to the config dir. */
    dir: z.string().min(1, { error: "must not be empty" }),
    /** false keeps the entry (and its settings) in the file without loading the plugin. */
    enabled: z.boolean().default(true),
    grants: buildPluginGrantsSchema().optional(),
    /** Extra variables for the plugin; they win over its manifest's. */
    env: PluginEnvSchema.default({}),
    /** Variables copied by name from the daemon's environment, when set there. */
    passthrough_env: z.array(PassthroughNameSchema).default([]),
    /** Overrides of the restart policy the plugin's manifest asks for; absent keys keep the manifest's. */
    restart: RestartConfigSchema.optional(),
  });

  const PluginSandboxSchema = z.strictObject({
    /** Refuse every plugin whose manifest does not enable the bubblewrap sandbox. */
    require: z.boolean().default(false),
    /** Let manifests ask for `network = "host"` inside the sandbox. */
    allow_host_network: z.boolean().default(false),
  });

  const PluginsFileSchema = z.strictObject({
    plugins: z.array(PluginEntrySchema).default([]),
    sandbox: PluginSandboxSchema.prefault({}),
  });

  return { PluginEntrySchema, PluginSandboxSchema, PluginsFileSchema };
}
export const PluginEntrySchema = disposableSchema(() => buildSchemas().PluginEntrySchema);
export const PluginSandboxSchema = disposableSchema(() => buildSchemas().PluginSandboxSchema);
export const PluginsFileSchema = disposableSchema(() => buildSchemas().PluginsFileSchema);
export type PluginEntry = z.output<typeof PluginEntrySchema>;
export type PluginsFile = z.output<typeof PluginsFileSchema>;

/** An entry after the loader resolved it: absolute `dir`, and the manifest when it is enabled. */
export interface ResolvedPluginEntry extends Omit<PluginEntry, "dir"> {
  dir: string;
  /** Read from the plugin directory; absent for disabled entries. */
  manifest?: LoadedPluginManifest;
}

export interface PluginsConfig {
  plugins: ResolvedPluginEntry[];
  sandbox: PluginsFile["sandbox"];
}

export const EMPTY_PLUGINS_CONFIG: PluginsConfig = {
  plugins: [],
  sandbox: { require: false, allow_host_network: false },
};

export function resolvePluginDir(entry: PluginEntry, configDir: string): ResolvedPluginEntry {
  return { ...entry, dir: resolve(configDir, entry.dir) };
}

/**
 * The daemon environment plugins are judged and started under: plugins.yaml's sandbox switches
 * turn the sandbox knobs on. Either source can turn a knob on; neither can turn off one that the
 * other set, so a file cannot weaken a policy the operator imposed through the environment.
 */
export function pluginEnvironment(sandbox: PluginsFile["sandbox"], env: Env): Env {
  return {
    ...env,
    ...(sandbox.require ? { [SANDBOX_REQUIRE_VAR]: "1" } : {}),
    ...(sandbox.allow_host_network ? { [SANDBOX_HOST_NET_ALLOW_VAR]: "1" } : {}),
  };
}

/** Per plugin id: what PluginManager's `settings` takes, plus the restart overrides. */
export type PluginLaunchSettings = PluginSettings & { restart: Partial<RestartPolicy> };

/** What the PluginManager needs from plugins.yaml: the enabled plugins and their settings by id. */
export function pluginLaunchPlan(config: PluginsConfig): {
  plugins: string[];
  settings: Record<string, PluginLaunchSettings>;
} {
  const plugins: string[] = [];
  const settings: Record<string, PluginLaunchSettings> = {};
  for (const entry of config.plugins) {
    if (!entry.enabled || entry.manifest === undefined) continue;
    plugins.push(entry.manifest.file);
    settings[entry.manifest.id] = {
      ...(entry.grants === undefined ? {} : { grants: entry.grants }),
      env: entry.env,
      passthroughEnv: entry.passthrough_env,
      restart: restartOverrides(entry.restart),
    };
  }
  return { plugins, settings };
}
