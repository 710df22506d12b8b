/**
 * `channel/list`, `channel/status` and the channel adapter extension through the real CLI:
 * - a standalone `nexo app-server --config DIR` lists the channel kinds of plugins.yaml's enabled
 *   channel plugins as `social`, and has no `channel/status` (nothing runs there);
 * - a connection that declares `channelAdapter` is probed with `ext/channel/heartbeat` (a plain
 *   client is not), is listed as an `external` channel while connected, a second adapter for the
 *   same channel is closed, and an adapter that stops answering the heartbeat is closed and
 *   unlisted;
 * - `nexo start` advertises `channelStatus` and reports its plugins' channels running.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { AppServerProcess, WsClient } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, daemonServer, LLM_YAML, managedServer } from "./management-helpers.js";

const EXAMPLES = fileURLToPath(new URL("../../../../../../examples/plugins/", import.meta.url));
const PLUGINS_YAML = `plugins:\n  - dir: ${join(EXAMPLES, "loopback-channel")}\n  - dir: ${join(EXAMPLES, "demo-tools")}\n`;

type Channel = { name: string; category: string; enabled?: boolean; running?: boolean };

const processes: AppServerProcess[] = [];
const sockets: WsClient[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const p of processes.splice(0)) await p.stop();
});
const cleanups: Array<() => void | Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const adapterCapabilities = (channelName: string) => ({
  channelAdapter: { channelName, deliveryCapabilities: { structuredDelivery: true } },
});

describe("AppServer channels", () => {
  test("standalone: channel plugins are social channels; no channel/status", async () => {
    const config = configDir({
      "agents.yaml": AGENTS_YAML,
      "llm.yaml": LLM_YAML,
      "plugins.yaml": PLUGINS_YAML,
    });
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.channelStatus, undefined);
    const { channels } = await server.request<{ channels: Channel[] }>("channel/list", {});
    assert.deepEqual(channels, [{ name: "loopback", category: "social" }]);
    assert.equal((await server.call("channel/status", {})).error?.code, -32601);
  });

  test("channel adapters: heartbeat, listed as external, one per channel, closed when they stop answering", async () => {
    const config = configDir({
      "appserver.yaml":
        "external_channels:\n  telegram: { transport: websocket }\n  slackish: { transport: websocket }\n",
    });
    const server = new AppServerProcess({
      args: ["--listen", "ws://127.0.0.1:0", "--config", config.dir],
      stdin: "ignore",
      // A probe every 5 s, to be answered within 1.7 s (a third of it): room for a loaded machine, where
      // an answer from this process can take over a second.
      env: { NEXO_APPSERVER_ADAPTER_HEARTBEAT_MS: "5000" },
    });
    processes.push(server);
    const url = await server.websocketUrl();
    const connect = () => {
      const client = new WsClient(url);
      sockets.push(client);
      return client;
    };
    const adapter = connect();
    const plain = connect();
    const mute = connect();
    await Promise.all([adapter.opened, plain.opened, mute.opened]);
    adapter.onServerRequest = (method) => (method === "ext/channel/heartbeat" ? {} : undefined);
    mute.onServerRequest = () => new Promise(() => undefined); // never answers
    await adapter.initialize(adapterCapabilities("telegram"), "telegram-adapter");
    await plain.initialize();
    await mute.initialize(adapterCapabilities("slackish"), "slackish-adapter");

    // Both adapters are listed while connected (before the first probe, five seconds away). Each is
    // adopted when its own `initialized` arrives, which another socket's request may overtake.
    const bothListed = async () => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const reply = await plain.request<{ channels: Channel[] }>("channel/list", {});
        if (reply.channels.length >= 2 || Date.now() > deadline) return reply;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const listed = await bothListed();
    assert.deepEqual(
      listed.channels.map((c) => [c.name, c.category]),
      [
        ["slackish", "external"],
        ["telegram", "external"],
      ],
    );
    await adapter.waitFor(
      () => adapter.received.filter((m) => m.method === "ext/channel/heartbeat").length >= 2,
      "two heartbeats",
    );

    // The adapter that does not answer is closed, and no longer listed.
    const closed = await mute.closed;
    assert.match(closed.reason, /heartbeat/);
    const after = await plain.request<{ channels: Channel[] }>("channel/list", {});
    assert.deepEqual(
      after.channels.map((c) => c.name),
      ["telegram"],
    );

    // A second adapter for a served channel is closed with the reason.
    const twin = connect();
    await twin.opened;
    await twin.initialize(adapterCapabilities("telegram"), "telegram-twin");
    assert.match((await twin.closed).reason, /already served/);

    // A plain client is never probed; the adapter that answers stays connected.
    assert.equal(plain.received.filter((m) => m.method === "ext/channel/heartbeat").length, 0);
    const still = await adapter.request<{ channels: Channel[] }>("channel/list", {});
    assert.ok(still.channels.some((c) => c.name === "telegram"));
  });

  test("the daemon advertises channelStatus and reports its channel plugin running", async () => {
    const { client, capabilities } = await daemonServer(
      {
        "agents.yaml":
          "agents:\n  - id: ana\n    model: { provider: scripted, model: s }\n    inbound_bindings: [{ plugin: loopback }]\n",
        "plugins.yaml": PLUGINS_YAML,
      },
      "ana",
      cleanups,
    );
    assert.equal(capabilities.channelStatus, true);
    const { channels } = await client.request<{ channels: Channel[] }>("channel/status", {});
    assert.deepEqual(channels, [{ name: "loopback", category: "social", enabled: true, running: true }]);
  });
});
