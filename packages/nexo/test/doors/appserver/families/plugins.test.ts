/**
 * `plugin/*` through the real CLI: `nexo app-server --config DIR` lists plugins.yaml's entries
 * (manifests read, disabled ones too) and switches one on with a comment-preserving edit; in
 * `nexo start` the switch starts or stops the plugin's process before the reply. The flag is there
 * only with a config directory; the errors are the reference's (-32602 for an unknown id, for
 * removing, for an entry that cannot be enabled).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { AppServerProcess } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, daemonServer, LLM_YAML, managedServer } from "./management-helpers.js";

const EXAMPLES = fileURLToPath(new URL("../../../../../../examples/plugins/", import.meta.url));

const PLUGINS_YAML = `# the plugins of this daemon
plugins:
  - dir: ${join(EXAMPLES, "demo-tools")} # tools
  - dir: ${join(EXAMPLES, "loopback-channel")}
    enabled: false # not yet
`;

type Plugin = {
  id: string;
  displayName: string;
  enabled: boolean;
  installed: boolean;
  installable: boolean;
  removable: boolean;
  rootPath: string;
  state?: string;
  functions: Array<{ name: string }>;
  interface: { capabilities: string[] };
};

const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});
const cleanups: Array<() => void | Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("AppServer plugin/*", () => {
  test("without a config directory the family is off: no flag, -32601", async () => {
    const { server, capabilities } = await managedServer(undefined, processes);
    assert.equal(capabilities.pluginManagement, undefined);
    assert.equal((await server.call("plugin/list", {})).error?.code, -32601);
  });

  test("list, view, setEnabled over plugins.yaml; comments kept; reference errors", async () => {
    const config = configDir({
      "agents.yaml": AGENTS_YAML,
      "llm.yaml": LLM_YAML,
      "plugins.yaml": PLUGINS_YAML,
    });
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.pluginManagement, true);

    const listed = await server.request<{ plugins: Plugin[]; diagnostics: unknown[] }>("plugin/list", {
      includeDisabled: true,
    });
    assert.deepEqual(
      listed.plugins.map((p) => [p.id, p.displayName, p.enabled, p.installed, p.installable, p.removable]),
      [
        ["demo", "Demo tools", true, true, false, false],
        ["loopback", "Loopback channel", false, true, false, false],
      ],
    );
    assert.equal(listed.plugins[1]!.rootPath, join(EXAMPLES, "loopback-channel"));
    assert.deepEqual(listed.plugins[1]!.interface.capabilities, ["channel:loopback"]);
    assert.deepEqual(listed.diagnostics, []);
    // Nothing runs in a standalone server: no live state, no functions.
    assert.equal(listed.plugins[0]!.state, undefined);
    const enabledOnly = await server.request<{ plugins: Plugin[] }>("plugin/list", {
      includeDisabled: false,
    });
    assert.deepEqual(
      enabledOnly.plugins.map((p) => p.id),
      ["demo"],
    );

    const viewed = await server.request<{ plugin: Plugin }>("plugin/view", { id: "loopback" });
    assert.equal(viewed.plugin.enabled, false);
    const unknown = await server.call("plugin/view", { id: "nope" });
    assert.equal(unknown.error?.code, -32602);
    assert.match(unknown.error?.data?.detail ?? "", /'nope' was not found/);
    assert.equal((await server.call("plugin/view", {})).error?.code, -32602);

    const enabled = await server.request<{ plugin: Plugin }>("plugin/setEnabled", {
      id: "loopback",
      enabled: true,
    });
    assert.equal(enabled.plugin.enabled, true);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.equal(changed.params?.source, "plugin/setEnabled");
    assert.deepEqual(changed.params?.regions, ["plugins"]);
    const text = config.read("plugins.yaml");
    assert.match(text, /^# the plugins of this daemon/);
    assert.match(text, /demo-tools # tools/);
    assert.match(text, /enabled: true # not yet/);

    await server.request("plugin/setEnabled", { id: "demo", enabled: false });
    assert.match(config.read("plugins.yaml"), /demo-tools # tools\n {4}enabled: false/);
    assert.equal((await server.call("plugin/setEnabled", { id: "nope", enabled: true })).error?.code, -32602);

    // Installing an installed plugin returns it; nothing of nexo's is removable.
    const installed = await server.request<{ plugin: Plugin }>("plugin/install", { id: "demo" });
    assert.equal(installed.plugin.id, "demo");
    const removed = await server.call("plugin/remove", { id: "demo" });
    assert.equal(removed.error?.code, -32602);
    assert.match(removed.error?.data?.detail ?? "", /not removable/);
  });

  test("an entry whose manifest is broken is a diagnostic, and enabling it is refused with the file kept", async () => {
    const broken = `plugins:\n  - dir: /nonexistent/plugin-dir\n    enabled: false\n`;
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML, "plugins.yaml": broken });
    const { server } = await managedServer(config, processes);
    const listed = await server.request<{
      plugins: Plugin[];
      diagnostics: Array<{ code: string; path: string }>;
    }>("plugin/list", {});
    assert.deepEqual(
      listed.diagnostics.map((d) => [d.code, d.path]),
      [["PluginManifestInvalid", "/nonexistent/plugin-dir"]],
    );
    const refused = await server.call("plugin/setEnabled", { id: "/nonexistent/plugin-dir", enabled: true });
    assert.equal(refused.error?.code, -32602);
    assert.match(refused.error?.data?.detail ?? "", /plugin-dir/);
    assert.equal(config.read("plugins.yaml"), broken);
  });

  test("in the daemon, setEnabled starts and stops the plugin before the reply", async () => {
    const { client, capabilities } = await daemonServer(
      {
        "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: s }\n",
        "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLES, "demo-tools")}\n    enabled: false\n`,
      },
      "ana",
      cleanups,
    );
    assert.equal(capabilities.pluginManagement, true);
    const before = await client.request<{ plugin: Plugin }>("plugin/view", { id: "demo" });
    assert.equal(before.plugin.state, undefined);

    const on = await client.request<{ plugin: Plugin }>("plugin/setEnabled", { id: "demo", enabled: true });
    assert.equal(on.plugin.state, "running", JSON.stringify(on.plugin));
    assert.ok(
      on.plugin.functions.some((f) => f.name === "demo_weather"),
      JSON.stringify(on.plugin.functions),
    );

    const off = await client.request<{ plugin: Plugin }>("plugin/setEnabled", { id: "demo", enabled: false });
    assert.equal(off.plugin.enabled, false);
    assert.equal(off.plugin.state, undefined, JSON.stringify(off.plugin));
  });
});
