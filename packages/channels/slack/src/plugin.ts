/**
 * nexo's Slack channel plugin: SlackChannel (./channel.ts) served over the plugin contract with
 * nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this package's directory (this
 * file compiled by the repository's build), which is why the manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → SlackChannel
 *   channel.credentials.validate / persist / probe           → the app's tokens (./credentials.ts)
 *   shutdown                                                 → the app disconnects, the queue stays
 *
 * Before anything else, every write to stderr (the daemon's log) goes through the redactor, so no
 * token or signing secret can reach a log line, whatever prints it.
 */
import { Redactor, serveChannelPlugin } from "@nexo/channels-common";
import { SlackChannel } from "./channel.js";
import {
  probeCredential,
  SLACK_TOKEN_ANYWHERE,
  tokensFromParams,
  validateCredential,
} from "./credentials.js";

const redactor = new Redactor([SLACK_TOKEN_ANYWHERE]);
redactor.add(process.env.SLACK_BOT_TOKEN);
redactor.add(process.env.SLACK_APP_TOKEN);
redactor.add(process.env.SLACK_SIGNING_SECRET);

await serveChannelPlugin({
  kind: "slack",
  manifestUrl: new URL("../nexo-plugin.toml", import.meta.url),
  redactor,
  create: (wiring) => new SlackChannel(wiring),
  features: (channel) => ({
    credentials: {
      validate: (params) => validateCredential(params),
      persist: async (params) => {
        await channel.rotate(params.instance ?? null, tokensFromParams(params));
      },
      probe: (params) => {
        const tokens = tokensFromParams(params);
        redactor.add(tokens.botToken);
        redactor.add(tokens.appToken);
        return probeCredential(channel.apiUrl, params);
      },
    },
  }),
});
