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
import { Redactor, serveChannelPlugin } from "@nexo/channels-common";
import { EmailChannel } from "./channel.js";
import { probeCredential, registeredFromParams, secretsOf, validateCredential } from "./credentials.js";

const redactor = new Redactor();

await serveChannelPlugin({
  kind: "email",
  manifestUrl: new URL("../nexo-plugin.toml", import.meta.url),
  redactor,
  create: (wiring) => new EmailChannel(wiring),
  features: (channel) => ({
    credentials: {
      validate: (params) => validateCredential(params),
      persist: async (params) => {
        await channel.rotate(params.instance ?? null, registeredFromParams(params));
      },
      probe: (params) => {
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
  }),
});
