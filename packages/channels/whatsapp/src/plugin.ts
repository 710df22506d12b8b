/**
 * nexo's WhatsApp channel plugin: WhatsAppChannel (./channel.ts) served over the plugin contract
 * with nexo-plugin-sdk (common's serveChannelPlugin). The daemon runs it as `node dist/plugin.js`
 * in this package's directory (this file compiled by the repository's build), which is why the
 * manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → WhatsAppChannel
 *   channel.pairing.start / cancel (+ pairing.update)        → linking a phone by QR or pairing code
 *   channel.bots.list / send                                 → whatsapp/bot/list|send
 *   shutdown                                                 → the device disconnects, keys and queue stay
 *
 * Every write to stderr (the daemon's log) goes through the redactor: the QR codes shown while
 * pairing, the pairing codes and the phone number a pairing by number names are added to it as
 * they come, so a log line never holds one.
 */
import { Redactor, serveChannelPlugin } from "@nexo/channels-common";
import { WhatsAppChannel } from "./channel.js";

const redactor = new Redactor();

await serveChannelPlugin({
  kind: "whatsapp",
  manifestUrl: new URL("../nexo-plugin.toml", import.meta.url),
  redactor,
  create: (wiring) =>
    new WhatsAppChannel({ ...wiring, pairingUpdate: (update) => wiring.broker().pairingUpdate(update) }),
  features: (channel) => ({
    pairing: {
      start: (params) => channel.pairingStart(params),
      cancel: (params) => channel.pairingCancel(params.challenge_id),
    },
    bots: {
      list: async () => ({ bots: await channel.botsList() }),
      send: async (params) => ({ message_id: await channel.botsSend(params.bot_jid, params.text) }),
    },
  }),
});
