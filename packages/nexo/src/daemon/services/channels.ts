/**
 * Channels: the channel kinds this daemon serves (each with the plugin that provides it) and the
 * ones its agents are bound to, with which agents and whether `channel.start` succeeded. A kind
 * bound but served by no local plugin is expected through the broker (another daemon's plugin).
 */
import type { OutboundMessage, OutboundReceipt } from "../../channels/registry.js";
import type { BoundChannel } from "../components/channels.js";
import { UnavailableError } from "./errors.js";

export interface ChannelsRuntime {
  bound(): BoundChannel[];
  adapters(): Array<{ kind: string; owner: string }>;
  /** Sends through the kind's adapter; undefined when no adapter serves the kind here. */
  send(kind: string, message: OutboundMessage): Promise<OutboundReceipt> | undefined;
}

/** No plugin of this daemon serves the channel kind (not configured, or its plugin is down). */
export class ChannelUnavailableError extends UnavailableError {
  override readonly name = "ChannelUnavailableError";
  constructor(readonly channel: string) {
    super(`no channel plugin serves "${channel}" here (not configured, or its plugin is not running)`);
  }
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

  /**
   * Sends one message through the channel plugin serving `kind` (what the router does with an
   * agent's reply). ChannelUnavailableError when none does; the plugin's own refusals (recipient,
   * rate limit, …) are its typed channel errors.
   */
  send(kind: string, message: OutboundMessage): Promise<OutboundReceipt> {
    const sent = this.runtime.send(kind, message);
    if (sent === undefined) return Promise.reject(new ChannelUnavailableError(kind));
    return sent;
  }

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
