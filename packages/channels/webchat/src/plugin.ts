/**
 * nexo's web chat channel plugin: WebchatChannel (./channel.ts) served over the plugin contract
 * with nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this package's directory
 * (this file compiled by the repository's build), which is why the manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → WebchatChannel
 *   channel.reply.delta (nexo's reply_stream feature)       → the visitor's open widgets
 *   shutdown                                                 → the listener closes, the queue stays
 *
 * Before anything else, every write to stderr (the daemon's log) goes through the redactor, so a
 * visitor's token (what proves who they are) never reaches a log line, whatever prints it.
 */
import { Redactor, serveChannelPlugin } from "@nexo/channels-common";
import { WebchatChannel } from "./channel.js";
import { VISITOR_TOKEN_ANYWHERE } from "./visitors.js";

await serveChannelPlugin({
  kind: "webchat",
  manifestUrl: new URL("../nexo-plugin.toml", import.meta.url),
  redactor: new Redactor([VISITOR_TOKEN_ANYWHERE]),
  create: ({ kind, log, broker }) =>
    new WebchatChannel({
      kind,
      env: process.env,
      publishAndWait: (topic, event) => broker().publishAndWait(topic, event),
      log,
    }),
  features: (channel) => ({
    replyStream: (params) => channel.streamDelta(params),
  }),
});
