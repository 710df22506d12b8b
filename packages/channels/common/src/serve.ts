/**
 * A channel plugin's process: one channel object served over the plugin contract with
 * nexo-plugin-sdk. Every channel plugin of this repository starts the same way, so the way is
 * written here once:
 *
 *   1. stderr (the daemon's log) goes through the plugin's redactor before anything can print;
 *   2. the channel is made, publishing through the adapter's broker;
 *   3. channel.start / stop / send_outbound and every optional feature method reach the channel,
 *      each refused with ChannelUnsupportedError when it names a kind this plugin does not serve
 *      (a misrouted call must not act on the wrong network);
 *   4. shutdown closes the channel (its outbound queue stays on disk for the next start).
 */
import { readFileSync } from "node:fs";
import {
  type BrokerSender,
  type ChannelFeatureHandlers,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  type Event,
  PluginAdapter,
} from "nexo-plugin-sdk";
import type { ChannelEnv } from "./env.js";
import { type Redactor, redactStderr } from "./redact.js";

/** A message `channel.send_outbound` asks a channel to send. */
export type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

/** The channel object a plugin serves: the contract's three channel methods and shutdown. */
export interface ServedChannel {
  /** Connects for `instance`; what it returns is added to the `{ok: true}` answer. */
  start(instance: string | null): Promise<object>;
  stop(): Promise<void>;
  send(message: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }>;
  close(): void | Promise<void>;
}

/** What a channel is made with. */
export interface ChannelWiring {
  kind: string;
  /** The plugin's environment, where the channel reads its settings. */
  env: ChannelEnv;
  /** One line to the daemon's log, prefixed with the kind (and redacted, like all of stderr). */
  log: (line: string) => void;
  /** The plugin's redactor: every credential the channel uses is added before it is used. */
  redactor: Redactor;
  /** The adapter's broker, once it exists (publishing starts after `channel.start`). */
  broker: () => BrokerSender;
  /** Publishes an inbound event through the broker. */
  publish: (topic: string, event: Event) => Promise<void>;
}

export interface ChannelPluginSpec<C extends ServedChannel> {
  /** The one channel kind this plugin serves. */
  kind: string;
  /** The plugin's `nexo-plugin.toml`. */
  manifestUrl: URL;
  /** Every secret pattern and value the plugin knows at start; more are added as they appear. */
  redactor: Redactor;
  create(wiring: ChannelWiring): C;
  /** The optional features (credentials, reply streaming, pairing, bots) as plain objects, given the channel. */
  features?: (channel: C) => ChannelFeatureHandlers;
}

/** The error for a call about a channel kind this plugin does not serve. */
export function wrongKind(served: string, asked: string): ChannelUnsupportedError {
  return new ChannelUnsupportedError(`this plugin serves the "${served}" channel, not "${asked}"`, {
    feature: `channel kind ${asked}`,
  });
}

/** Runs the channel plugin until the daemon shuts it down. */
export async function serveChannelPlugin<C extends ServedChannel>(spec: ChannelPluginSpec<C>): Promise<void> {
  redactStderr(spec.redactor);
  const { kind } = spec;
  const check = (asked: string): void => {
    if (asked !== kind) throw wrongKind(kind, asked);
  };
  const channel = spec.create({
    kind,
    env: process.env,
    log: (line) => void process.stderr.write(`${kind}: ${line}\n`),
    redactor: spec.redactor,
    broker: () => adapter.broker,
    publish: (topic, event) => adapter.broker.publish(topic, event),
  });
  const adapter: PluginAdapter = new PluginAdapter({
    manifestToml: readFileSync(spec.manifestUrl, "utf8"),
    onChannelStart: async (params) => {
      check(params.kind);
      return { ok: true, ...(await channel.start(params.instance ?? null)) };
    },
    onChannelStop: async (params) => {
      check(params.kind);
      await channel.stop();
    },
    onChannelSendOutbound: (params) => {
      check(params.kind);
      return channel.send(params.msg);
    },
    ...(spec.features === undefined
      ? {}
      : { channelFeatures: checkedFeatures(spec.features(channel), kind) }),
    onShutdown: () => channel.close(),
  });
  await adapter.run();
}

/** The same features, each method first checking the kind its params name. */
export function checkedFeatures(features: ChannelFeatureHandlers, kind: string): ChannelFeatureHandlers {
  const { replyStream, ...requestFeatures } = features;
  const checked: Record<string, unknown> = {};
  for (const [name, methods] of Object.entries(requestFeatures)) {
    if (methods !== undefined) checked[name] = checkedMethods(methods, kind);
  }
  if (replyStream !== undefined) {
    // A notification: nothing to answer, so a delta about another kind is ignored, not refused.
    checked.replyStream = (params: Parameters<typeof replyStream>[0]) => {
      if (params.kind === kind) replyStream(params);
    };
  }
  return checked as ChannelFeatureHandlers;
}

function checkedMethods(methods: object, kind: string): object {
  const checked: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    checked[name] =
      typeof method === "function"
        ? (params: { kind: string }, ...rest: unknown[]) => {
            if (params.kind !== kind) throw wrongKind(kind, params.kind);
            return method.call(methods, params, ...rest);
          }
        : method;
  }
  return checked;
}
