/**
 * nexo's WhatsApp channel plugin: WhatsAppChannel (./channel.ts) served over the plugin contract
 * with nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this package's directory
 * (this file compiled by the repository's build), which is why the manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → WhatsAppChannel
 *   channel.pairing.start / cancel (+ pairing.update)        → linking a phone by QR code
 *   channel.bots.list / send                                 → whatsapp/bot/list|send
 *   shutdown                                                 → the device disconnects, keys and queue stay
 *
 * Before anything else, every write to stderr (the daemon's log) goes through the redactor: the
 * QR codes shown while pairing are added to it as they come, so a log line never holds one.
 */
import { readFileSync } from "node:fs";
import { Redactor, redactStderr } from "@nexo/channels-common";
import { ChannelUnsupportedError, PluginAdapter } from "nexo-plugin-sdk";
import { WhatsAppChannel } from "./channel.js";

const KIND = "whatsapp";

const redactor = new Redactor();
redactStderr(redactor);

function log(line: string): void {
  process.stderr.write(`whatsapp: ${line}\n`);
}

function checkKind(kind: string): void {
  if (kind !== KIND) {
    throw new ChannelUnsupportedError(`this plugin serves the "${KIND}" channel, not "${kind}"`, {
      feature: `channel kind ${kind}`,
    });
  }
}

const channel: WhatsAppChannel = new WhatsAppChannel({
  kind: KIND,
  env: process.env,
  publish: (topic, event) => adapter.broker.publish(topic, event),
  pairingUpdate: (update) => adapter.broker.pairingUpdate(update),
  log,
  redactor,
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
        return channel.pairingStart(params);
      },
      cancel: (params) => {
        checkKind(params.kind);
        return channel.pairingCancel(params.challenge_id);
      },
    },
    bots: {
      list: async (params) => {
        checkKind(params.kind);
        return { bots: await channel.botsList() };
      },
      send: async (params) => {
        checkKind(params.kind);
        return { message_id: await channel.botsSend(params.bot_jid, params.text) };
      },
    },
  },
  onShutdown: () => channel.close(),
});

await adapter.run();
