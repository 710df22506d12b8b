/**
 * Channels: the channel kinds this daemon serves (each with the plugin that provides it) and the
 * ones its agents are bound to, with which agents and whether `channel.start` succeeded. A kind
 * bound but served by no local plugin is expected through the broker (another daemon's plugin).
 */
import type { ChannelFeatures } from "../../channels/features.js";
import type { OutboundMessage, OutboundReceipt } from "../../channels/registry.js";
import type { BoundChannel } from "../components/channels.js";
import { UnavailableError } from "./errors.js";

export interface ChannelsRuntime {
  bound(): BoundChannel[];
  adapters(): Array<{ kind: string; owner: string }>;
  /** Sends through the kind's adapter; undefined when no adapter serves the kind here. */
  send(kind: string, message: OutboundMessage): Promise<OutboundReceipt> | undefined;
  /** The optional features of the kind's adapter now; undefined when no adapter serves the kind here. */
  features(kind: string): ChannelFeatures | undefined;
}

export type ChannelFeatureName = keyof ChannelFeatures;

/**
 * No plugin of this daemon serves the channel kind (not configured, or its plugin is down), or the
 * one that does does not offer the feature asked for.
 */
export class ChannelUnavailableError extends UnavailableError {
  override readonly name = "ChannelUnavailableError";
  constructor(
    readonly channel: string,
    readonly feature?: ChannelFeatureName,
  ) {
    super(
      feature === undefined
        ? `no channel plugin serves "${channel}" here (not configured, or its plugin is not running)`
        : `the channel plugin serving "${channel}" here does not offer ${feature} (or none serves it)`,
    );
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

  /**
   * One optional feature (pairing, bots, credentials) of the plugin serving `kind`, as it stands
   * now. ChannelUnavailableError (naming the feature) when no plugin serves the kind or it does not
   * offer the feature.
   */
  feature<F extends ChannelFeatureName>(kind: string, feature: F): NonNullable<ChannelFeatures[F]> {
    const offered = this.runtime.features(kind)?.[feature];
    if (offered === undefined) throw new ChannelUnavailableError(kind, feature);
    return offered as NonNullable<ChannelFeatures[F]>;
  }

  /** Like `feature`, but undefined when it is not offered (the credential persister is optional). */
  optionalFeature<F extends ChannelFeatureName>(kind: string, feature: F): ChannelFeatures[F] {
    return this.runtime.features(kind)?.[feature];
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
