/**
 * Plugin channels (plugin contract §5.x): one ChannelAdapter per `[plugin.extends].channels`
 * kind, each method one request carrying `kind`, within 30 s (start, stop) or 60 s
 * (send_outbound); NEXO_PLUGIN_CHANNEL_TIMEOUT_MS overrides all three.
 *
 * Errors: -33001..-33005 arrive as the typed channel errors of @nexo/wire (the peer decodes them,
 * `retry_after_secs` kept as `retryAfterSecs`); -32601 means the plugin declared the kind but not
 * this method, which surfaces as ChannelUnsupportedError with the method as `feature`.
 */
import {
  ChannelUnsupportedError,
  MethodNotFoundError,
  type MethodOf,
  type ParamsIn,
  type ResultOf,
} from "@nexo/wire";
import type { plugin } from "@nexo/wire/schemas";
import type { ChannelFeatures } from "../../channels/features.js";
import type {
  ChannelAdapter,
  ChannelRegistry,
  ChannelStartOptions,
  OutboundMessage,
  OutboundReceipt,
} from "../../channels/registry.js";
import { type PluginCalls, pluginCalls } from "./calls.js";
import { PairingUpdates, pluginChannelFeatures } from "./channel-features.js";
import { PluginProtocolError } from "./errors.js";
import type { PluginHost } from "./host.js";
import { registerEach } from "./registration.js";

type ChannelHost = Pick<PluginHost, "id" | "request" | "requestStream" | "timeouts" | "session">;
type ChannelMethod = Extract<MethodOf<typeof plugin.pluginMethods>, `channel.${string}`>;

export class PluginChannelAdapter implements ChannelAdapter {
  readonly kind: string;
  readonly owner: string;
  private readonly host: ChannelHost;
  private readonly calls: PluginCalls;

  /** `pairingUpdates`: the plugin's `channel.pairing.update` notifications (one hub per plugin). */
  constructor(
    host: ChannelHost,
    kind: string,
    private readonly pairingUpdates?: PairingUpdates,
  ) {
    this.host = host;
    this.calls = pluginCalls(host);
    this.kind = kind;
    this.owner = `plugin:${host.id}`;
  }

  /** nexo's optional features the running incarnation advertised (./channel-features.ts). */
  features(): ChannelFeatures {
    if (this.pairingUpdates === undefined) return {};
    return pluginChannelFeatures(this.host, this.calls, this.kind, this.pairingUpdates);
  }

  async start(options: ChannelStartOptions = {}): Promise<void> {
    const reply = await this.call(
      "channel.start",
      { kind: this.kind, instance: options.instance ?? null },
      this.host.timeouts.channel.startMs,
    );
    expectOk("channel.start", reply);
  }

  async stop(): Promise<void> {
    const reply = await this.call("channel.stop", { kind: this.kind }, this.host.timeouts.channel.stopMs);
    expectOk("channel.stop", reply);
  }

  async sendOutbound(message: OutboundMessage): Promise<OutboundReceipt> {
    const reply = await this.call(
      "channel.send_outbound",
      { kind: this.kind, msg: message },
      this.host.timeouts.channel.sendOutboundMs,
    );
    return { messageId: reply.message_id, sentAtUnix: reply.sent_at_unix };
  }

  private async call<M extends ChannelMethod>(
    method: M,
    params: ParamsIn<typeof plugin.pluginMethods, M>,
    timeoutMs: number,
  ): Promise<ResultOf<typeof plugin.pluginMethods, M>> {
    try {
      return await this.calls.request(method, params, { timeoutMs });
    } catch (error) {
      if (error instanceof MethodNotFoundError) {
        throw new ChannelUnsupportedError(`plugin "${this.host.id}" does not implement ${method}`, {
          feature: method,
        });
      }
      throw error;
    }
  }
}

function expectOk(method: string, reply: plugin.OkResult): void {
  // A failure is an error reply (§5.x); `ok: false` is a plugin that got the contract wrong.
  if (reply.ok !== true)
    throw new PluginProtocolError(method, "ok must be true (failures are error replies)");
}

/** Registers an adapter per `[plugin.extends].channels` kind. Returns a function that removes them. */
export function registerPluginChannels(
  host: ChannelHost & Pick<PluginHost, "manifest" | "attach">,
  registry: ChannelRegistry,
): () => void {
  const kinds = host.manifest.manifest.plugin.extends?.channels ?? [];
  if (kinds.length === 0) return () => {};
  const updates = new PairingUpdates(host);
  const unregister = registerEach(kinds, (kind) =>
    registry.register(new PluginChannelAdapter(host, kind, updates)),
  );
  return () => {
    unregister();
    updates.close();
  };
}
