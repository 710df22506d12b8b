/**
 * `plugin/*` (`pluginManagement`) over nexo's plugins: a plugin is an entry of plugins.yaml (its
 * directory and nexo-plugin.toml), enabled or not. `plugin/setEnabled` switches the entry's
 * `enabled` key — one comment-preserving edit, validated with the whole config directory first —
 * and, in the daemon, the reload that follows starts or stops the plugin before the reply.
 *
 * What a plugin contributes is shown the protocol's way: the tools a running plugin registered are
 * its `functions`, its channel kinds go in `interface.capabilities`; nexo plugins bundle no skills
 * and no MCP servers, so those lists are empty. nexo has no catalog of bundled plugins to deploy:
 * every plugin is `installed`, none is `installable` or `removable`, and `plugin/install` /
 * `plugin/remove` answer as the reference does for such a plugin (the installed plugin for an
 * install, -32602 otherwise). The live fields (`functions`, a failed plugin's diagnostic) are
 * there only where the daemon runs the plugins.
 */
import {
  AppServerErrorCode as Code,
  type PluginDiagnostic,
  type PluginInfo,
  pluginManagementMethods,
} from "@nexo/wire/schemas/appserver";
import type { ConfiguredPlugin, DaemonServices } from "../../../daemon/services/index.js";
import { type Call, defineFamily } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, servicesOf } from "./managed.js";

const CODES = { not_found: Code.invalidParams, invalid_config: Code.invalidParams };

function diagnostics(plugin: ConfiguredPlugin): PluginDiagnostic[] {
  const found: PluginDiagnostic[] = [];
  if (plugin.problem !== undefined) {
    found.push({
      severity: "error",
      code: "PluginManifestInvalid",
      message: plugin.problem,
      pluginId: plugin.id,
      path: plugin.dir,
    });
  }
  const error = plugin.status?.lastError;
  if (plugin.enabled && error !== undefined && plugin.status?.state !== "running") {
    found.push({ severity: "error", code: error.code, message: error.message, pluginId: plugin.id });
  }
  return found;
}

export function toPluginInfo(plugin: ConfiguredPlugin): PluginInfo {
  const declared = plugin.manifest?.manifest.plugin;
  const problems = diagnostics(plugin);
  return {
    id: plugin.id,
    displayName: declared?.name ?? plugin.id,
    description: declared?.description ?? null,
    version: declared?.version ?? null,
    enabled: plugin.enabled,
    installed: true,
    installable: false,
    removable: false,
    source: "workspace",
    rootPath: plugin.dir,
    interface: {
      displayName: declared?.name ?? plugin.id,
      shortDescription: declared?.description ?? null,
      capabilities: (plugin.manifest?.channelKinds ?? []).map((kind) => `channel:${kind}`),
    },
    functions: (plugin.status?.tools ?? []).map((name) => ({ name, namespace: plugin.id, description: "" })),
    skills: [],
    mcpServers: [],
    ...(problems.length === 0 ? {} : { diagnostics: problems }),
    // nexo's own: what the plugin manager says of it ("running", "failed", …; absent when not run here).
    ...(plugin.status === undefined ? {} : { state: plugin.status.state }),
  };
}

async function find(services: DaemonServices, id: string): Promise<ConfiguredPlugin> {
  const plugin = (await viaServices(CODES, () => services.plugins.configured())).find((p) => p.id === id);
  if (plugin === undefined) {
    throw familyError(Code.invalidParams, "Invalid params", `Plugin '${id}' was not found in plugins.yaml.`);
  }
  return plugin;
}

async function setEnabled(call: Call, id: string, enabled: boolean): Promise<{ plugin: PluginInfo }> {
  const services = servicesOf(call);
  await find(services, id);
  const result = await viaServices(CODES, () => services.plugins.setEnabled(id, enabled));
  if (result.changed) announceConfigChange(call.host, "plugin/setEnabled", ["plugins"]);
  return { plugin: toPluginInfo(result.plugin) };
}

export const pluginFamily = defineFamily({
  name: "plugins",
  methods: pluginManagementMethods,
  available: managesConfig,
  capabilities: () => ({ pluginManagement: true }),
  handlers: {
    "plugin/list": async ({ includeDisabled }, call) => {
      const plugins = await viaServices(CODES, () => servicesOf(call).plugins.configured());
      const shown = plugins.filter((plugin) => includeDisabled !== false || plugin.enabled);
      return {
        plugins: shown.map(toPluginInfo),
        diagnostics: plugins.flatMap(diagnostics),
      };
    },
    "plugin/view": async ({ id }, call) => ({ plugin: toPluginInfo(await find(servicesOf(call), id)) }),
    "plugin/setEnabled": ({ id, enabled }, call) => setEnabled(call, id, enabled),
    // Every nexo plugin is installed already (it is in plugins.yaml): installing it is a no-op.
    "plugin/install": async ({ id }, call) => ({ plugin: toPluginInfo(await find(servicesOf(call), id)) }),
    "plugin/remove": async ({ id }, call) => {
      await find(servicesOf(call), id);
      throw familyError(
        Code.invalidParams,
        "Invalid params",
        `Plugin '${id}' is not removable: nexo does not delete plugin directories; disable it with plugin/setEnabled or remove its plugins.yaml entry.`,
      );
    },
  },
});
