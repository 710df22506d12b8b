/**
 * nexo's optional channel features over a plugin (wire schemas, plugin/channel-features.ts): the
 * pairing, bots and credential-persister requests and the reply-stream notifications, offered by a plugin's channel adapters only
 * while the running incarnation advertised them in its `initialize` reply. A plugin written with
 * an upstream SDK advertises none and is never sent them.
 *
 * Within an advertised feature, -32601 is a method the plugin left out: `validate` then accepts
 * every shape, `persist` is no step and `probe` is `not_probed`; for the others it is
 * ChannelUnsupportedError (-33005) naming the method.
 * Every call is bounded by the channel timeout of `channel.send_outbound`.
 *
 * `channel.pairing.update` notifications are received once per plugin (PairingUpdates, on every
 * incarnation's peer) and handed to each listener; a listener picks its challenges by id.
 */
import {
  ChannelUnsupportedError,
  Dispatcher,
  type JsonRpcPeer,
  MethodNotFoundError,
  type ParamsIn,
  type ResultOf,
} from "@nexo/wire";
import * as plugin from "@nexo/wire/schemas/plugin";
import type {
  ChannelBots,
  ChannelCredential,
  ChannelCredentialPersister,
  ChannelFeatures,
  ChannelPairing,
  ChannelReplyStream,
} from "../../channels/features.js";
import type { PluginCalls } from "./calls.js";
import type { PluginHost } from "./host.js";

export type FeatureHost = Pick<PluginHost, "id" | "session" | "timeouts">;

type Listener = (update: plugin.ChannelPairingUpdateParams) => void;

/** The plugin's `channel.pairing.update` notifications, for whoever listens. */
export class PairingUpdates {
  private readonly listeners = new Set<Listener>();
  private readonly detach: () => void;

  constructor(host: Pick<PluginHost, "attach">) {
    this.detach = host.attach((peer: JsonRpcPeer) => {
      new Dispatcher(peer, { notifications: plugin.pluginNotifications }).on(
        "channel.pairing.update",
        (update) => {
          for (const listener of this.listeners) listener(update);
        },
      );
    });
  }

  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.detach();
    this.listeners.clear();
  }
}

/** The features `kind` offers through this plugin now. */
export function pluginChannelFeatures(
  host: FeatureHost,
  calls: PluginCalls,
  kind: string,
  updates: PairingUpdates,
): ChannelFeatures {
  const advertised = host.session?.channelFeatures;
  if (advertised === undefined || advertised.size === 0) return {};
  const timeoutMs = host.timeouts.channel.sendOutboundMs;
  const call: Call = async (method, params, absent) => {
    try {
      return await calls.request(method, params, { timeoutMs });
    } catch (error) {
      if (!(error instanceof MethodNotFoundError)) throw error;
      if (absent !== undefined) return absent;
      throw new ChannelUnsupportedError(`plugin "${host.id}" does not implement ${method}`, {
        feature: method,
      });
    }
  };
  const features: ChannelFeatures = {};
  if (advertised.has("pairing")) features.pairing = pairing(kind, call, updates);
  if (advertised.has("bots")) features.bots = bots(kind, call);
  if (advertised.has("credentials")) features.credentials = persister(kind, call);
  if (advertised.has("reply_stream")) features.replyStream = replyStream(kind, host);
  return features;
}

type FeatureMethod = Extract<
  plugin.PluginMethodName,
  `channel.pairing.${string}` | `channel.bots.${string}` | `channel.credentials.${string}`
>;
/** One request; `absent` is the answer when the plugin left the method out (-32601). */
type Methods = typeof plugin.pluginMethods;
type Call = <M extends FeatureMethod>(
  method: M,
  params: ParamsIn<Methods, M>,
  absent?: ResultOf<Methods, M>,
) => Promise<ResultOf<Methods, M>>;

function pairing(kind: string, call: Call, updates: PairingUpdates): ChannelPairing {
  return {
    start: (params) => call("channel.pairing.start", { kind, ...params }),
    cancel: async (challengeId) => {
      await call("channel.pairing.cancel", { kind, challenge_id: challengeId });
    },
    onUpdate: (listener) => updates.listen(listener),
  };
}

/**
 * Each piece as a `channel.reply.delta` notification. A piece that cannot be written (the plugin
 * is restarting) is dropped: the whole reply follows through `channel.send_outbound`.
 */
function replyStream(kind: string, host: FeatureHost): ChannelReplyStream {
  return {
    delta: ({ instance, ...piece }) => {
      const params: plugin.ChannelReplyDeltaParams = { kind, instance: instance ?? null, ...piece };
      host.session?.peer.notify("channel.reply.delta", params).catch(() => undefined);
    },
  };
}

function bots(kind: string, call: Call): ChannelBots {
  return {
    list: async (params) => (await call("channel.bots.list", { kind, ...params })).bots,
    send: async (params) => (await call("channel.bots.send", { kind, ...params })).message_id,
  };
}

function persister(kind: string, call: Call): ChannelCredentialPersister {
  const params = (credential: ChannelCredential) => ({ kind, ...credential });
  const skipped = { ok: false };
  return {
    validate: (credential) => call("channel.credentials.validate", params(credential), { valid: true }),
    persist: async (credential) =>
      (await call("channel.credentials.persist", params(credential), skipped)) !== skipped,
    probe: (credential) =>
      call("channel.credentials.probe", params(credential), {
        probed: false,
        healthy: false,
        reason_code: "not_probed",
        detail: "the channel plugin does not probe credentials",
      }),
  };
}
