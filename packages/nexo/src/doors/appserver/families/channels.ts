/**
 * `channel/list` (core, always served) and `channel/status` (`channelStatus`, where the channels
 * run): the channels threads and deliveries can come from. nexo's categories:
 *
 * - `social`: a channel kind a channel plugin serves — from plugins.yaml's enabled plugins'
 *   manifests, and, in the daemon, every kind its channel registry serves or its agents are bound to;
 * - `external`: a channel an AppServer connection serves as a channel adapter (channel-adapters.ts).
 *
 * `channel/status` says whether each is enabled in the configuration and running now; it is only
 * served where the plugins run (the daemon), since a standalone server has nothing running to ask.
 */
import {
  appServerMethods,
  type ChannelCategory,
  type ChannelStatusResult,
} from "@nexo/wire/schemas/appserver";
import { defineFamily } from "../family.js";
import type { AppServerHost } from "../host.js";
import { managesLive } from "./managed.js";

type ChannelRow = ChannelStatusResult["channels"][number];

const ORDER: readonly ChannelCategory[] = ["builtin", "social", "system", "external"];

async function channels(host: AppServerHost): Promise<ChannelRow[]> {
  const rows = new Map<string, ChannelRow>();
  const services = host.management?.services;
  if (services !== undefined) {
    // A config directory that cannot be read has no plugins to list; the runtime view still counts.
    const configured = await services.plugins.configured().catch(() => []);
    for (const plugin of configured) {
      if (!plugin.enabled) continue;
      for (const kind of plugin.manifest?.channelKinds ?? []) {
        rows.set(kind, { name: kind, category: "social", enabled: true, running: false });
      }
    }
    for (const channel of services.channels.list()) {
      const running = channel.owner !== undefined;
      const row = rows.get(channel.kind);
      if (row !== undefined) row.running ||= running;
      else rows.set(channel.kind, { name: channel.kind, category: "social", enabled: true, running });
    }
  }
  for (const adapter of host.channelAdapters.list()) {
    rows.set(adapter.name, { name: adapter.name, category: "external", enabled: true, running: true });
  }
  return [...rows.values()].sort(
    (a, b) =>
      ORDER.indexOf(a.category) - ORDER.indexOf(b.category) ||
      a.name.toLowerCase().localeCompare(b.name.toLowerCase()),
  );
}

export const channelListFamily = defineFamily({
  name: "channel-list",
  methods: appServerMethods,
  capabilities: () => ({}),
  handlers: {
    "channel/list": async (_params, { host }) => ({
      channels: (await channels(host)).map(({ name, category }) => ({ name, category })),
    }),
  },
});

export const channelStatusFamily = defineFamily({
  name: "channel-status",
  methods: appServerMethods,
  available: managesLive,
  capabilities: () => ({ channelStatus: true }),
  handlers: {
    "channel/status": async (_params, { host }) => ({ channels: await channels(host) }),
  },
});
