/**
 * nexo's Telegram channel plugin: TelegramChannel (./channel.ts) served over the plugin contract
 * with nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this package's directory
 * (this file compiled by the repository's build), which is why the manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → TelegramChannel
 *   channel.credentials.validate / persist / probe           → the bot token (./credentials.ts)
 *   shutdown                                                 → the bot disconnects, the queue stays
 *
 * Before anything else, every write to stderr (the daemon's log) goes through the redactor, so no
 * bot token or webhook secret can reach a log line, whatever prints it.
 */
import { Redactor, serveChannelPlugin } from "@nexo/channels-common";
import { TelegramChannel } from "./channel.js";
import { BOT_TOKEN_ANYWHERE, probeCredential, tokenFromParams, validateCredential } from "./credentials.js";

const redactor = new Redactor([BOT_TOKEN_ANYWHERE]);
redactor.add(process.env.TELEGRAM_BOT_TOKEN);
redactor.add(process.env.TELEGRAM_WEBHOOK_SECRET);

await serveChannelPlugin({
  kind: "telegram",
  manifestUrl: new URL("../nexo-plugin.toml", import.meta.url),
  redactor,
  create: (wiring) => new TelegramChannel(wiring),
  features: (channel) => ({
    credentials: {
      validate: (params) => validateCredential(params),
      persist: async (params) => {
        await channel.rotate(params.instance ?? null, tokenFromParams(params));
      },
      probe: (params) => {
        redactor.add(tokenFromParams(params));
        return probeCredential(channel.apiRoot, params);
      },
    },
  }),
});
