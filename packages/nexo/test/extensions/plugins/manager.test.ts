/**
 * The plugin manager: several plugins started in parallel, each wired into the engine's
 * registries and the broker, one plugin's failure never stopping the others, status for /readyz,
 * and a stop that leaves no child behind.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, describe, it } from "node:test";
import { createEvent } from "../../../src/broker/event.js";
import { LocalBroker } from "../../../src/broker/local.js";
import { ChannelRegistry } from "../../../src/channels/registry.js";
import { HookRunner } from "../../../src/engine/hooks.js";
import { ProviderRegistry } from "../../../src/engine/providers/registry.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { ToolContext } from "../../../src/engine/types.js";
import { PluginManager } from "../../../src/extensions/plugins/index.js";
import { ProcessGroupRegistry } from "../../../src/extensions/reaper.js";
import { VectorBackendRegistry } from "../../../src/memory/vector.js";
import { baseEnv, pluginDir } from "../../fixtures/plugins/harness.js";
import { isGone, recordingLogger, waitUntil } from "../../fixtures/processes.js";

const root = mkdtempSync(join(tmpdir(), "nexo-manager-"));
after(() => rmSync(root, { recursive: true, force: true }));

const managers: PluginManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.stop()));
});

const context: ToolContext = {
  signal: new AbortController().signal,
  sessionId: "s1",
  agentId: "ana",
  callId: "c1",
  workspace: "/tmp",
  unconfined: false,
};

function brokenPluginDir(): string {
  const dir = join(root, "broken");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "nexo-plugin.toml"), '[plugin]\nid = "Broken!"\n');
  return dir;
}

describe("plugin manager", () => {
  it("starts several plugins in parallel and wires each into the registries and the broker", async () => {
    const broker = new LocalBroker({ logger: recordingLogger() as never });
    const registries = {
      tools: new ToolRegistry(),
      providers: new ProviderRegistry(),
      hooks: new HookRunner(),
      channels: new ChannelRegistry(),
      vectors: new VectorBackendRegistry(),
    };
    const groups = new ProcessGroupRegistry();
    const manager = new PluginManager({
      plugins: [pluginDir("kitchen"), pluginDir("minimal"), brokenPluginDir(), pluginDir("kitchen")],
      stateRoot: join(root, "state"),
      env: baseEnv(),
      broker,
      registries,
      logger: recordingLogger(),
      processGroups: groups,
      shutdownTimeoutMs: 1_000,
    });
    managers.push(manager);
    const statuses = await manager.start();

    assert.deepEqual(
      statuses.map((s) => [s.state, s.lastError?.code]),
      [
        ["running", undefined],
        ["running", undefined],
        ["invalid", "manifest_invalid"],
        ["invalid", "duplicate_plugin_id"],
      ],
    );
    assert.match(statuses[2]?.lastError?.message ?? "", /nexo-plugin\.toml:2:1: plugin\.id: must match/);
    assert.equal(statuses[0]?.id, "kitchen");
    assert.ok(statuses[0]?.tools.includes("kitchen_echo"));
    assert.match(statuses[0]?.warnings.join() ?? "", /kitchen_unlisted/);

    assert.deepEqual(registries.channels.kinds(), ["kitchen_chat"]);
    assert.ok(registries.providers.has("kitchen_llm"));
    assert.ok(registries.hooks.has("before_message"));
    assert.deepEqual(registries.vectors.names(), ["kitchen_vec"]);
    assert.deepEqual(await registries.tools.invoke("kitchen_echo", { text: "via manager" }, context), {
      output: "echo: via manager (agent ana, plugin kitchen)",
    });

    broker.publish(
      "plugin.outbound.kitchen_chat",
      createEvent({ topic: "plugin.outbound.kitchen_chat", source: "agent.ana", payload: { text: "hi" } }),
    );
    await waitUntil(() => (manager.status()[0]?.bridge?.delivered ?? 0) === 1, 2_000, "the bridged event");

    const pids = manager.status().flatMap((s) => (s.pid === undefined ? [] : [s.pid]));
    assert.equal(pids.length, 2);
    await manager.stop();
    for (const pid of pids) assert.ok(isGone(pid));
    assert.equal(groups.size, 0);
    assert.deepEqual(registries.channels.kinds(), [], "wrappers are removed on stop");
    assert.equal(registries.tools.list().length, 0);
    assert.deepEqual(
      manager.status().map((s) => s.state),
      ["stopped", "stopped", "invalid", "invalid"],
    );
    await broker.close();
  });

  it("keeps the other plugins running when one cannot start, and reports why", async () => {
    const manager = new PluginManager({
      plugins: [pluginDir("kitchen"), pluginDir("minimal")],
      stateRoot: join(root, "state2"),
      env: baseEnv(),
      settings: { kitchen: { env: { FIXTURE_ID: "impostor" } } },
      logger: recordingLogger(),
    });
    managers.push(manager);
    const statuses = await manager.start();
    assert.equal(statuses[0]?.state, "failed");
    assert.equal(statuses[0]?.lastError?.code, "plugin_identity_mismatch");
    assert.equal(statuses[1]?.state, "running");
  });

  it("applies plugins.yaml's per-plugin restart: over the manifest's [plugin.supervisor]", async () => {
    // kitchen's manifest asks for respawn = true (3 attempts, 100 ms); the operator turns it off.
    const tools = new ToolRegistry();
    const logger = recordingLogger();
    const manager = new PluginManager({
      plugins: [pluginDir("kitchen")],
      stateRoot: join(root, "state-restart"),
      env: baseEnv(),
      registries: { tools },
      settings: { kitchen: { restart: { respawn: false } } },
      logger,
    });
    managers.push(manager);
    await manager.start();
    await tools.invoke("kitchen_crash", {}, context);
    await waitUntil(() => manager.status()[0]?.state === "failed", 3_000, "the plugin to be marked failed");
    assert.equal(manager.status()[0]?.restarts, 0, "no restart was attempted");
    assert.match(manager.status()[0]?.lastError?.message ?? "", /respawn is disabled/);
    assert.ok(!logger.entries.some((e) => /^restarting after/.test(e.message ?? "")));
  });

  it("a per-plugin restart: override also wins over the manager-wide policy, key by key", async () => {
    const manager = new PluginManager({
      plugins: [pluginDir("kitchen")],
      stateRoot: join(root, "state-restart2"),
      env: baseEnv(),
      restart: { respawn: false, initialDelayMs: 10 },
      settings: { kitchen: { restart: { respawn: true, maxRestarts: 1 } } },
      logger: recordingLogger(),
    });
    managers.push(manager);
    await manager.start();
    const crash = async () => {
      const host = manager.host("kitchen")!;
      const params = { plugin_id: "kitchen", tool_name: "kitchen_crash", args: {}, agent_id: "a" };
      await host.request("tool.invoke", params, { timeoutMs: 2_000 }).catch(() => undefined);
    };
    await crash();
    await waitUntil(
      () => manager.status()[0]?.state === "running" && manager.status()[0]?.restarts === 1,
      3_000,
      "one restart (the plugin's respawn = true wins over the manager's false)",
    );
    await crash();
    await waitUntil(() => manager.status()[0]?.state === "failed", 3_000, "the second crash to be final");
    assert.match(manager.status()[0]?.lastError?.message ?? "", /crash loop/);
  });

  it("removes a plugin's wrappers when it gives up after a crash loop", async () => {
    const tools = new ToolRegistry();
    const manager = new PluginManager({
      plugins: [pluginDir("kitchen")],
      stateRoot: join(root, "state3"),
      env: baseEnv(),
      registries: { tools },
      restart: { respawn: true, maxRestarts: 0 },
      logger: recordingLogger(),
    });
    managers.push(manager);
    await manager.start();
    assert.ok(tools.has("kitchen_echo"));
    await tools.invoke("kitchen_crash", {}, context);
    await waitUntil(() => manager.status()[0]?.state === "failed", 3_000, "the plugin to be marked failed");
    assert.equal(tools.list().length, 0);
    assert.match(manager.status()[0]?.lastError?.message ?? "", /crash loop|exited with code 3/);
  });
});
