/**
 * nexo's Discord channel plugin: DiscordChannel (./channel.ts) served over the plugin contract with
 * nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this package's directory (this
 * file compiled by the repository's build), which is why the manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → DiscordChannel
 *   channel.credentials.validate / persist / probe           → the bot token (./credentials.ts)
 *   shutdown                                                 → the bot disconnects, the queue stays
 *
 * Before anything else, every write to stderr (the daemon's log) goes through the redactor, so no
 * bot token can reach a log line, whatever prints it.
 */
import { readFileSync } from "node:fs";
import { Redactor, redactStderr } from "@nexo/channels-common";
import { ChannelUnsupportedError, PluginAdapter } from "nexo-plugin-sdk";
import { DiscordChannel } from "./channel.js";
import {
  DISCORD_TOKEN_ANYWHERE,
  probeCredential,
  tokenFromParams,
  validateCredential,
} from "./credentials.js";

const KIND = "discord";

const redactor = new Redactor([DISCORD_TOKEN_ANYWHERE]);
redactor.add(process.env.DISCORD_BOT_TOKEN);
redactStderr(redactor);

function log(line: string): void {
  process.stderr.write(`discord: ${line}\n`);
}

function checkKind(kind: string): void {
  if (kind !== KIND) {
    throw new ChannelUnsupportedError(`this plugin serves the "${KIND}" channel, not "${kind}"`, {
      feature: `channel kind ${kind}`,
    });
  }
}

const channel: DiscordChannel = new DiscordChannel({
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
        await channel.rotate(params.instance ?? null, tokenFromParams(params));
      },
      probe: (params) => {
        checkKind(params.kind);
        if (validateCredential(params).valid) redactor.add(tokenFromParams(params));
        return probeCredential(channel.apiUrl, params);
      },
    },
  },
  onShutdown: () => channel.close(),
});

await adapter.run();
