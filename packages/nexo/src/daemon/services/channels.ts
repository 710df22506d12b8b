/**
 * Channels: the channel kinds this daemon serves (each with the plugin that provides it) and the
 * ones its agents are bound to, with which agents and whether `channel.start` succeeded. A kind
 * bound but served by no local plugin is expected through the broker (another daemon's plugin).
 */
import type { BoundChannel } from "../components/channels.js";

export interface ChannelsRuntime {
  bound(): BoundChannel[];
  adapters(): Array<{ kind: string; owner: string }>;
}

export interface ChannelInfo {
  kind: string;
  /** Who serves it here (`plugin:<id>`); undefined when no local plugin does. */
  owner: string | undefined;
  /** Each bound instance (null: instance-less traffic) with its agents and start outcome. */
  bindings: Array<Omit<BoundChannel, "kind" | "owner">>;
}

export class ChannelsService {
  constructor(private readonly runtime: ChannelsRuntime) {}

  /** Every kind served here or bound to, sorted by kind. */
  list(): ChannelInfo[] {
    const kinds = new Map<string, ChannelInfo>();
    for (const { kind, owner } of this.runtime.adapters()) kinds.set(kind, { kind, owner, bindings: [] });
    for (const { kind, owner, ...binding } of this.runtime.bound()) {
      const info = kinds.get(kind) ?? { kind, owner, bindings: [] };
      info.bindings.push(binding);
      kinds.set(kind, info);
    }
    return [...kinds.values()].sort((a, b) => a.kind.localeCompare(b.kind));
  }
}
