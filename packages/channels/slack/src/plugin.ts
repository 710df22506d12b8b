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
import { readFileSync } from "node:fs";
import { Redactor, redactStderr } from "@nexo/channels-common";
import { ChannelUnsupportedError, PluginAdapter } from "nexo-plugin-sdk";
import { SlackChannel } from "./channel.js";
import {
  probeCredential,
  SLACK_TOKEN_ANYWHERE,
  tokensFromParams,
  validateCredential,
} from "./credentials.js";

const KIND = "slack";

const redactor = new Redactor([SLACK_TOKEN_ANYWHERE]);
redactor.add(process.env.SLACK_BOT_TOKEN);
redactor.add(process.env.SLACK_APP_TOKEN);
redactor.add(process.env.SLACK_SIGNING_SECRET);
redactStderr(redactor);

function log(line: string): void {
  process.stderr.write(`slack: ${line}\n`);
}

function checkKind(kind: string): void {
  if (kind !== KIND) {
    throw new ChannelUnsupportedError(`this plugin serves the "${KIND}" channel, not "${kind}"`, {
      feature: `channel kind ${kind}`,
    });
  }
}

const channel: SlackChannel = new SlackChannel({
  kind: KIND,
  env: process.env,
  publish: (topic, event) => adapter.broker.publish(topic, event),
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
    credentials: {
      validate: (params) => {
        checkKind(params.kind);
        return validateCredential(params);
      },
      persist: async (params) => {
        checkKind(params.kind);
        await channel.rotate(params.instance ?? null, tokensFromParams(params));
      },
      probe: (params) => {
        checkKind(params.kind);
        const tokens = tokensFromParams(params);
        redactor.add(tokens.botToken);
        redactor.add(tokens.appToken);
        return probeCredential(channel.apiUrl, params);
      },
    },
  },
  onShutdown: () => channel.close(),
});

await adapter.run();
