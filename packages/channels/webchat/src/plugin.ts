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
import { readFileSync } from "node:fs";
import { Redactor, redactStderr } from "@nexo/channels-common";
import { ChannelUnsupportedError, PluginAdapter } from "nexo-plugin-sdk";
import { WebchatChannel } from "./channel.js";
import { VISITOR_TOKEN_ANYWHERE } from "./visitors.js";

const KIND = "webchat";

redactStderr(new Redactor([VISITOR_TOKEN_ANYWHERE]));

function log(line: string): void {
  process.stderr.write(`webchat: ${line}\n`);
}

function checkKind(kind: string): void {
  if (kind !== KIND) {
    throw new ChannelUnsupportedError(`this plugin serves the "${KIND}" channel, not "${kind}"`, {
      feature: `channel kind ${kind}`,
    });
  }
}

const channel: WebchatChannel = new WebchatChannel({
  kind: KIND,
  env: process.env,
  publishAndWait: (topic, event) => adapter.broker.publishAndWait(topic, event),
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
    replyStream: (params) => {
      if (params.kind === KIND) channel.streamDelta(params);
    },
  },
  onShutdown: () => channel.close(),
});

await adapter.run();
