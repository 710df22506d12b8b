/**
 * `externalChannel/*` (`externalChannelManagement`): the channel adapters this server accepts, kept
 * as `external_channels` in the config directory's appserver.yaml (external-channels.ts reads
 * them at every adapter's handshake). What DotCraft Desktop does with them: before it starts a
 * channel module it upserts `{name, enabled: true, transport: "websocket"}`, the module then
 * connects as that channel's adapter; its channels page lists, edits and removes them, including
 * `subprocess` channels the server starts itself (channel-processes.ts).
 *
 * Edits go through the services' writer (validated with the whole directory, comments kept), are
 * announced as `workspace/configChanged` region `externalChannel`, and take effect at once: a
 * subprocess channel is started or stopped, a connected adapter whose channel was removed or
 * disabled gets `channelRejected` and is closed. Errors: unknown name -32080, a channel the file
 * would refuse -32081 (every problem in `data.detail`), a name a channel plugin serves -32082.
 */
import {
  AppServerErrorCode as Code,
  type ExternalChannelConfig,
  externalChannelMethods,
} from "@nexo/wire/schemas/appserver";
import { EXTERNAL_CHANNEL_NAME, type ExternalChannelEntry } from "../../../daemon/config/appserver.js";
import type { DaemonServices } from "../../../daemon/services/index.js";
import { patchAppServerFile } from "../appserver-file.js";
import { findChannel, readExternalChannels, toWireChannel } from "../external-channels.js";
import { type Call, defineFamily } from "../family.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, servicesOf } from "./managed.js";

const CODES = {
  not_found: Code.externalChannelNotFound,
  invalid_config: Code.externalChannelValidationFailed,
  conflict: Code.externalChannelNameConflict,
};

const invalid = (detail: string) =>
  familyError(Code.externalChannelValidationFailed, "External channel validation failed", detail);

function notFound(name: string) {
  return familyError(
    Code.externalChannelNotFound,
    "External channel not found",
    `External channel '${name}' is not in appserver.yaml.`,
  );
}

/** The wire channel as the file's entry; nulls (the other transport's fields) are dropped. */
function toEntry(channel: ExternalChannelConfig): { name: string; entry: ExternalChannelEntry } {
  const name = channel.name.trim();
  if (!EXTERNAL_CHANNEL_NAME.test(name)) {
    throw invalid(`'${channel.name}' is not a channel name: letters, digits, _ . - (up to 64).`);
  }
  const transport = channel.transport ?? "subprocess";
  if (transport !== "websocket" && transport !== "subprocess") {
    throw invalid(`transport must be "websocket" or "subprocess", not "${transport}".`);
  }
  const entry: ExternalChannelEntry = { transport };
  if (channel.enabled === false) entry.enabled = false;
  if (transport === "subprocess") {
    const command = channel.command?.trim();
    if (!command) throw invalid(`A subprocess channel needs a command (channel '${name}').`);
    entry.command = command;
    if (channel.args?.length) entry.args = channel.args;
    if (channel.workingDirectory?.trim()) entry.working_directory = channel.workingDirectory.trim();
    if (channel.env && Object.keys(channel.env).length > 0) entry.env = channel.env;
  }
  return { name, entry };
}

/** Channel kinds served by channel plugins here: an adapter cannot take their name. */
async function pluginChannel(services: DaemonServices, name: string): Promise<string | undefined> {
  const wanted = name.toLowerCase();
  const configured = await services.plugins.configured().catch(() => []);
  for (const plugin of configured) {
    if (!plugin.enabled) continue;
    const kind = plugin.manifest?.channelKinds.find((k) => k.toLowerCase() === wanted);
    if (kind !== undefined) return `the channel plugin ${plugin.id} (${plugin.dir})`;
  }
  const running = services.channels.list().find((channel) => channel.kind.toLowerCase() === wanted);
  return running?.owner === undefined ? undefined : `the channel plugin ${running.owner}`;
}

/** After an edit: announce it and let the running side follow (adapters re-checked, processes). */
async function applied(call: Call, source: string): Promise<void> {
  announceConfigChange(call.host, source, ["externalChannel"]);
  await call.host.externalChannelsChanged();
}

export const externalChannelFamily = defineFamily({
  name: "external-channels",
  methods: externalChannelMethods,
  available: managesConfig,
  capabilities: () => ({ externalChannelManagement: true }),
  handlers: {
    "externalChannel/list": async (_params, call) => {
      const channels = await viaServices(CODES, () => readExternalChannels(servicesOf(call)));
      return { channels: Object.entries(channels).map(([name, entry]) => toWireChannel(name, entry)) };
    },
    "externalChannel/get": async ({ name }, call) => {
      const channels = await viaServices(CODES, () => readExternalChannels(servicesOf(call)));
      const found = findChannel(channels, name.trim());
      if (found === undefined) throw notFound(name);
      return { channel: toWireChannel(found.name, found.entry) };
    },
    "externalChannel/upsert": async ({ channel }, call) => {
      const services = servicesOf(call);
      const { name, entry } = toEntry(channel);
      const owner = await pluginChannel(services, name);
      if (owner !== undefined) {
        throw familyError(
          Code.externalChannelNameConflict,
          "External channel name conflict",
          `Channel '${name}' is served by ${owner}; an external adapter cannot take its name.`,
        );
      }
      const existing = findChannel(await viaServices(CODES, () => readExternalChannels(services)), name);
      // Replace, not merge: the new definition is the whole entry (setting a key replaces its node);
      // an entry spelled in another case is replaced too. One edit, validated as a whole.
      const patch: Record<string, unknown> = { [name]: entry };
      if (existing !== undefined && existing.name !== name) patch[existing.name] = null;
      await viaServices(CODES, () => patchAppServerFile(services, ["external_channels"], patch));
      await applied(call, "externalChannel/upsert");
      return { channel: toWireChannel(name, entry) };
    },
    "externalChannel/remove": async ({ name }, call) => {
      const services = servicesOf(call);
      const found = findChannel(await viaServices(CODES, () => readExternalChannels(services)), name.trim());
      if (found === undefined) throw notFound(name);
      await viaServices(CODES, () =>
        patchAppServerFile(services, ["external_channels"], { [found.name]: null }),
      );
      await applied(call, "externalChannel/remove");
      return { removed: true };
    },
  },
});
