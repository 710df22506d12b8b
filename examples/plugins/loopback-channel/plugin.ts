/**
 * The loopback channel plugin: wires LoopbackChannel (src/channel.ts) to the plugin contract with
 * nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this directory: this file
 * compiled (see nexo-plugin.toml), which is why the manifest is read from one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound  → LoopbackChannel
 *   broker.event on plugin.outbound.loopback[.<instance>] → a reply to deliver
 *   shutdown                                              → the listener is closed first
 */
import { readFileSync } from "node:fs";
import { ChannelUnsupportedError, type Event, PluginAdapter } from "nexo-plugin-sdk";
import { LoopbackChannel } from "./src/channel.js";

const KIND = "loopback";

function log(line: string): void {
  process.stderr.write(`loopback: ${line}\n`);
}

function checkKind(kind: string): void {
  if (kind !== KIND) {
    throw new ChannelUnsupportedError(`this plugin serves the "${KIND}" channel, not "${kind}"`, {
      feature: `channel kind ${kind}`,
    });
  }
}

const channel: LoopbackChannel = new LoopbackChannel({
  kind: KIND,
  env: process.env,
  // The adapter is created below; the channel only publishes once it runs.
  publish: (topic: string, event: Event): Promise<void> => adapter.broker.publish(topic, event),
  log,
});

const adapter: PluginAdapter = new PluginAdapter({
  manifestToml: readFileSync(new URL("../nexo-plugin.toml", import.meta.url), "utf8"),
  onChannelStart: async (params) => {
    checkKind(params.kind);
    return { ok: true, ...(await channel.start(params.instance ?? null)) };
  },
  onChannelStop: async (params) => {
    checkKind(params.kind);
    await channel.stop();
  },
  onChannelSendOutbound: (params) => {
    checkKind(params.kind);
    return channel.send(params.msg);
  },
  onEvent: (topic, event) => channel.deliverEvent(topic, event),
  // Open connections would keep the process alive after the shutdown ack.
  onShutdown: () => channel.stop(),
});

await adapter.run();
