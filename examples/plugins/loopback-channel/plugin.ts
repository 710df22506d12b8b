/**
 * The loopback channel plugin: wires LoopbackChannel (src/channel.ts) to the plugin contract with
 * nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this directory: this file
 * compiled (see nexo-plugin.toml), which is why the manifest is read from one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound  → LoopbackChannel
 *   broker.event on plugin.outbound.loopback[.<instance>] → a reply to deliver
 *   shutdown                                              → the listener is closed first
 *
 * and nexo's optional channel features (advertised in the initialize reply by the SDK):
 *   channel.pairing.start / channel.pairing.cancel        → a QR code scanned over HTTP
 *   channel.bots.list / channel.bots.send                 → LOOPBACK_BOTS
 *   channel.credentials.validate / channel.credentials.probe → src/credentials.ts
 */
import { readFileSync } from "node:fs";
import { ChannelUnsupportedError, type Event, PluginAdapter } from "nexo-plugin-sdk";
import { LoopbackChannel } from "./src/channel.js";
import { probeCredential, validateCredential } from "./src/credentials.js";

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
  // The adapter is created below; the channel only publishes once it runs. A POST is answered 202
  // only once nexo has taken the message (acknowledged publish when nexo offers it).
  publish: (topic: string, event: Event) => adapter.broker.publishAndWait(topic, event),
  reportPairing: (update) => adapter.broker.pairingUpdate(update),
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
  channelFeatures: {
    pairing: {
      start: (params) => {
        checkKind(params.kind);
        return channel.startPairing(params.challenge_id, params.expires_at_ms);
      },
      cancel: (params) => channel.cancelPairing(params.challenge_id),
    },
    bots: {
      list: (params) => {
        checkKind(params.kind);
        return { bots: channel.bots() };
      },
      send: (params) => {
        checkKind(params.kind);
        return { message_id: channel.sendToBot(params.bot_jid, params.text) };
      },
    },
    credentials: {
      validate: (params) => {
        checkKind(params.kind);
        return validateCredential(params);
      },
      probe: (params) => probeCredential(channel.url, params),
    },
  },
  onEvent: (topic, event) => channel.deliverEvent(topic, event),
  // Open connections would keep the process alive after the shutdown ack.
  onShutdown: () => channel.stop(),
});

await adapter.run();
