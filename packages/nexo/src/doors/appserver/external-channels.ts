/**
 * Which channel adapters this server accepts: the `external_channels` of the config directory's
 * appserver.yaml (the list `externalChannel/*` edits). An adapter connection is accepted when its
 * `channelAdapter.channelName` names an enabled entry there and it came the entry's way — a
 * `websocket` channel's adapter connects by itself, a `subprocess` channel's adapter is the
 * process this server started for it (channel-processes.ts). Anything else is refused with
 * `system/event {kind: "channelRejected"}` (channel-adapters.ts). A server without a config
 * directory has no such list and accepts no adapter.
 *
 * The file is read at each check, so an edit — through these methods, the admin RPC or by hand —
 * counts from the next adapter that connects; the methods' own edits also re-check the adapters
 * connected now (host.ts).
 */
import type { ExternalChannel } from "@nexo/wire/schemas/appserver";
import type { ExternalChannelEntry } from "../../daemon/config/appserver.js";
import type { DaemonServices } from "../../daemon/services/index.js";
import { readAppServerFile } from "./appserver-file.js";

export type ExternalChannels = Record<string, ExternalChannelEntry>;

export async function readExternalChannels(services: DaemonServices): Promise<ExternalChannels> {
  return (await readAppServerFile(services)).external_channels ?? {};
}

/** The entry for `name`, matched without regard to case (as DotCraft does), with its own spelling. */
export function findChannel(
  channels: ExternalChannels,
  name: string,
): { name: string; entry: ExternalChannelEntry } | undefined {
  const wanted = name.toLowerCase();
  for (const [key, entry] of Object.entries(channels)) {
    if (key.toLowerCase() === wanted) return { name: key, entry };
  }
  return undefined;
}

/** An entry in the protocol's words. */
export function toWireChannel(name: string, entry: ExternalChannelEntry): ExternalChannel {
  return {
    name,
    enabled: entry.enabled !== false,
    transport: entry.transport,
    ...(entry.command === undefined ? {} : { command: entry.command }),
    ...(entry.args === undefined ? {} : { args: entry.args }),
    ...(entry.working_directory === undefined ? {} : { workingDirectory: entry.working_directory }),
    ...(entry.env === undefined ? {} : { env: entry.env }),
  };
}

/** How an adapter connection came: by itself, or as the process started for a channel. */
export interface AdapterOrigin {
  /** The channel this server started the connection's process for; undefined: it connected itself. */
  spawnedFor: string | undefined;
}

/**
 * Why `name` is refused for a connection of `origin`, or undefined when it is accepted. `services`
 * undefined: the server has no config directory.
 */
export async function rejection(
  services: DaemonServices | undefined,
  name: string,
  origin: AdapterOrigin,
): Promise<string | undefined> {
  if (services === undefined) {
    return `Channel '${name}' is not registered in server configuration: this server has no config directory (start it with --config DIR and list the channel under external_channels in appserver.yaml).`;
  }
  let channels: ExternalChannels;
  try {
    channels = await readExternalChannels(services);
  } catch (error) {
    return `Channel '${name}' cannot be checked: appserver.yaml cannot be read (${(error as Error).message}).`;
  }
  const found = findChannel(channels, name);
  if (found === undefined) {
    return `Channel '${name}' is not registered in server configuration (external_channels in appserver.yaml).`;
  }
  if (found.entry.enabled === false) return `Channel '${found.name}' is disabled in server configuration.`;
  if (
    found.entry.transport === "subprocess" &&
    origin.spawnedFor?.toLowerCase() !== found.name.toLowerCase()
  ) {
    return `Channel '${found.name}' is subprocess-only; WebSocket adapter attach is not supported.`;
  }
  if (found.entry.transport === "websocket" && origin.spawnedFor !== undefined) {
    return `Channel '${found.name}' is a websocket channel; its adapter connects by itself.`;
  }
  return undefined;
}
