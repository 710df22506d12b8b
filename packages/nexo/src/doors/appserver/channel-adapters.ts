/**
 * External channel adapters: connections that declared `capabilities.channelAdapter` at
 * `initialize` speak for one channel (a Telegram bot bridge, say). Once such a connection is
 * ready, the server
 *
 * - probes it with `ext/channel/heartbeat` every `heartbeatMs` and closes it when a probe goes
 *   unanswered for `heartbeatTimeoutMs` (the adapter is expected to reconnect and initialize again);
 * - in the daemon, registers it as the adapter of its channel kind, so what nexo sends to that kind
 *   (an agent's reply routed there, `nexo/dispatch`) is delivered as `ext/channel/send`;
 * - lists it in `channel/list` and `channel/status` as an `external` channel.
 *
 * Only the channels the server's configuration lists are accepted (external-channels.ts): an
 * adapter for any other name gets `system/event {kind: "channelRejected", channelName, message}`
 * and is closed. One connection per channel name: a second adapter for a name that is already
 * served here (by another adapter connection or by a channel plugin) is closed with the reason.
 */

import { ChannelConnectionError, ChannelUnsupportedError } from "@nexo/wire";
import type {
  ChannelAdapterCapability,
  ChannelOutboundMessage,
  ExtChannelSendResult,
} from "@nexo/wire/schemas/appserver";
import type { ChannelAdapter, OutboundMessage, OutboundReceipt } from "../../channels/registry.js";
import type { Logger } from "../../log.js";
import type { AppServerConnection } from "./connection.js";

/** Where a daemon-hosted AppServer registers its adapters: the daemon's channel registry. */
export interface ChannelSink {
  has(kind: string): boolean;
  register(adapter: ChannelAdapter): () => void;
}

/** Why the adapter of `name` on `connection` is refused; undefined when it is accepted. */
export type AdapterGate = (name: string, connection: AppServerConnection) => Promise<string | undefined>;

export interface ChannelAdapterOptions {
  logger: Logger;
  gate: AdapterGate;
  /** Absent in a standalone server: nothing there sends to channels. */
  sink?: ChannelSink | undefined;
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
}

/** Every 30 s, 10 s to answer (the reference's pong timeout). */
export const DEFAULT_HEARTBEAT_MS = 30_000;
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

export interface ConnectedAdapter {
  readonly name: string;
  readonly declared: ChannelAdapterCapability;
  readonly connection: AppServerConnection;
}

export class ChannelAdapterConnections {
  private readonly byName = new Map<string, ConnectedAdapter>();

  constructor(private readonly options: ChannelAdapterOptions) {}

  /** Watches a new connection: if it turns out to be an adapter, it is adopted once ready. */
  attach(connection: AppServerConnection): void {
    connection.onReady(() => {
      const declared = connection.capabilities.channelAdapter;
      if (declared !== undefined) void this.admit(connection, declared);
    });
  }

  /** The adapters connected now, by channel name. */
  list(): ConnectedAdapter[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The adapter connected for `channel` now. */
  get(channel: string): ConnectedAdapter | undefined {
    return this.byName.get(channel);
  }

  /** Checks the connected adapters again (the configuration changed): refused ones are closed. */
  async recheck(): Promise<void> {
    await Promise.all(
      this.list().map(async (adapter) => {
        const refused = await this.options.gate(adapter.name, adapter.connection);
        if (refused !== undefined) reject(adapter.connection, adapter.name, refused);
      }),
    );
  }

  private async admit(connection: AppServerConnection, declared: ChannelAdapterCapability): Promise<void> {
    const refused = await this.options.gate(declared.channelName, connection).catch((error: Error) => {
      return `Channel '${declared.channelName}' cannot be checked: ${error.message}`;
    });
    if (refused !== undefined) {
      this.options.logger.warn(
        { connection: connection.id, channel: declared.channelName, reason: refused },
        "channel adapter rejected",
      );
      reject(connection, declared.channelName, refused);
      return;
    }
    if (connection.phase !== "closed") this.adopt(connection, declared);
  }

  private adopt(connection: AppServerConnection, declared: ChannelAdapterCapability): void {
    const name = declared.channelName;
    if (this.byName.has(name) || this.options.sink?.has(name)) {
      connection.abort(`channel "${name}" is already served here; one adapter per channel`);
      return;
    }
    const adapter: ConnectedAdapter = { name, declared, connection };
    this.byName.set(name, adapter);
    const unregister = this.options.sink?.register(outboundAdapter(adapter));
    const timer = setInterval(() => void this.probe(adapter), this.options.heartbeatMs);
    timer.unref();
    connection.onClose(() => {
      clearInterval(timer);
      unregister?.();
      if (this.byName.get(name) === adapter) this.byName.delete(name);
    });
    this.options.logger.info({ connection: connection.id, channel: name }, "channel adapter connected");
  }

  private inFlight = new WeakSet<ConnectedAdapter>();

  private async probe(adapter: ConnectedAdapter): Promise<void> {
    if (this.inFlight.has(adapter)) return;
    this.inFlight.add(adapter);
    try {
      await adapter.connection.request(
        "ext/channel/heartbeat",
        {},
        { timeoutMs: this.options.heartbeatTimeoutMs },
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      adapter.connection.abort(`the channel adapter did not answer ext/channel/heartbeat (${reason})`);
    } finally {
      this.inFlight.delete(adapter);
    }
  }
}

/** Tells the adapter why (`system/event` channelRejected, as DotCraft does), then closes it. */
function reject(connection: AppServerConnection, channelName: string, message: string): void {
  connection.notify("system/event", { kind: "channelRejected", channelName, message });
  connection.abort(message);
}

/** nexo's outbound message as the protocol's structured delivery. */
function toDelivery(message: OutboundMessage): ChannelOutboundMessage {
  if (message.kind === "text") return { kind: "text", text: message.body };
  if (message.kind === "media") {
    return {
      kind: "file",
      source: { kind: "url", url: message.url },
      ...(message.caption === undefined ? {} : { caption: message.caption }),
    };
  }
  throw new ChannelUnsupportedError("a channel adapter takes text and media messages, not custom ones", {
    feature: "custom",
  });
}

/** The channel registry's view of an adapter connection: sending is `ext/channel/send`. */
function outboundAdapter({ name, connection }: ConnectedAdapter): ChannelAdapter {
  return {
    kind: name,
    owner: `appserver:${connection.clientInfo?.name ?? `connection ${connection.id}`}`,
    // The adapter connected by itself and goes when its connection does.
    start: async () => {},
    stop: async () => {},
    sendOutbound: async (message: OutboundMessage): Promise<OutboundReceipt> => {
      const target = "to" in message && typeof message.to === "string" ? message.to : "";
      let result: ExtChannelSendResult;
      try {
        result = await connection.request("ext/channel/send", { target, message: toDelivery(message) });
      } catch (error) {
        if (error instanceof ChannelUnsupportedError) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new ChannelConnectionError(`the channel adapter for "${name}" did not answer: ${reason}`);
      }
      if (!result.delivered) {
        throw new ChannelConnectionError(
          `the channel adapter for "${name}" did not deliver: ${result.errorCode ?? "AdapterDeliveryFailed"}${
            result.errorMessage ? ` (${result.errorMessage})` : ""
          }`,
          { errorCode: result.errorCode ?? null },
        );
      }
      return {
        messageId: result.remoteMessageId ?? `${name}-${Date.now()}`,
        sentAtUnix: Math.floor(Date.now() / 1000),
      };
    },
  };
}
