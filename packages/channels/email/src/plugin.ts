/**
 * nexo's email channel plugin: EmailChannel (./channel.ts) served over the plugin contract with
 * nexo-plugin-sdk. The daemon runs it as `node dist/plugin.js` in this package's directory (this
 * file compiled by the repository's build), which is why the manifest is one directory up.
 *
 *   channel.start / channel.stop / channel.send_outbound    → EmailChannel
 *   channel.credentials.validate / persist / probe           → the mailbox login (./credentials.ts)
 *   shutdown                                                 → the mailbox logs out, the queue stays
 *
 * Before anything else, every write to stderr (the daemon's log) goes through the redactor, so no
 * password can reach a log line, whatever prints it.
 */
import { readFileSync } from "node:fs";
import { Redactor, redactStderr } from "@nexo/channels-common";
import { ChannelUnsupportedError, PluginAdapter } from "nexo-plugin-sdk";
import { EmailChannel } from "./channel.js";
import { probeCredential, registeredFromParams, secretsOf, validateCredential } from "./credentials.js";

const KIND = "email";

const redactor = new Redactor();
redactStderr(redactor);

function log(line: string): void {
  process.stderr.write(`email: ${line}\n`);
}

function checkKind(kind: string): void {
  if (kind !== KIND) {
    throw new ChannelUnsupportedError(`this plugin serves the "${KIND}" channel, not "${kind}"`, {
      feature: `channel kind ${kind}`,
    });
  }
}

const channel: EmailChannel = new EmailChannel({
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
        await channel.rotate(params.instance ?? null, registeredFromParams(params));
      },
      probe: (params) => {
        checkKind(params.kind);
        try {
          for (const secret of secretsOf(registeredFromParams(params).login)) redactor.add(secret);
        } catch {
          // Not a mailbox: the probe says so.
        }
        return probeCredential((registered) => {
          const config = channel.config(params.instance ?? null, registered);
          return config instanceof Error ? `invalid configuration: ${config.message}` : config;
        }, params);
      },
    },
  },
  onShutdown: () => channel.close(),
});

await adapter.run();
