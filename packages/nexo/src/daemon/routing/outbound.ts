/**
 * Sends an agent's reply back through the channel it came from: through the channel adapter a
 * plugin registered for the kind (`channel.send_outbound`), or, when no adapter serves the kind
 * (e.g. the channel plugin runs on another daemon), as a broker event on
 * `plugin.outbound.<kind>[.<instance>]`. A channel that answers "rate limited" (-33004) is retried
 * after the `retry_after_secs` it asked for, a bounded number of times. A channel that shows
 * replies growing is also sent each piece while the agent writes it (`delta`).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { ChannelRateLimitedError } from "@nexo/wire";
import { createEvent } from "../../broker/event.js";
import type { Broker } from "../../broker/types.js";
import type { ChannelRegistry } from "../../channels/registry.js";

export interface ReplyTarget {
  kind: string;
  instance: string | undefined;
  to: string;
  sessionId: string;
}

export interface OutboundOptions {
  /** Attempts in all, rate-limit retries included. Default 4. */
  maxAttempts?: number;
  /** The longest wait honoured for one retry_after; longer asks fail at once. Default 120 s. */
  maxRetryAfterSecs?: number;
  /** Used when a channel says "rate limited" without saying how long. Default 1 s. */
  defaultRetryAfterSecs?: number;
  wait?: (ms: number) => Promise<void>;
}

export class ReplySender {
  private readonly maxAttempts: number;
  private readonly maxRetryAfterSecs: number;
  private readonly defaultRetryAfterSecs: number;
  private readonly wait: (ms: number) => Promise<void>;

  constructor(
    private readonly channels: ChannelRegistry,
    private readonly broker: Broker,
    options: OutboundOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 4;
    this.maxRetryAfterSecs = options.maxRetryAfterSecs ?? 120;
    this.defaultRetryAfterSecs = options.defaultRetryAfterSecs ?? 1;
    this.wait = options.wait ?? ((ms) => sleep(ms).then(() => undefined));
  }

  /**
   * Where one turn's pieces of the reply go as it is written, to a channel that shows replies
   * growing (a plugin that advertised `reply_stream`): undefined for other channels, and the
   * broker route, which get only the whole reply. The channel's features are looked up once for
   * all of the turn's pieces (a plugin channel builds its feature objects at each lookup, and a
   * turn has dozens of pieces); a plugin that restarts during the turn and changes what it
   * advertises is seen from the next turn on.
   */
  pieces(target: ReplyTarget, turnId: string): ((text: string) => void) | undefined {
    const stream = this.channels.get(target.kind)?.features?.().replyStream;
    if (stream === undefined) return undefined;
    const instance = target.instance ?? null;
    return (text) => stream.delta({ instance, to: target.to, turn_id: turnId, text });
  }

  /** Resolves when the channel accepted the reply; throws the channel's typed error otherwise. */
  async send(target: ReplyTarget, text: string): Promise<"adapter" | "broker"> {
    const adapter = this.channels.get(target.kind);
    if (!adapter) {
      const topic = `plugin.outbound.${target.kind}${target.instance ? `.${target.instance}` : ""}`;
      this.broker.publish(
        topic,
        createEvent({
          topic,
          source: "nexo",
          session_id: target.sessionId,
          payload: { to: target.to, text, ...(target.instance ? { instance: target.instance } : {}) },
        }),
      );
      return "broker";
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await adapter.sendOutbound({
          kind: "text",
          to: target.to,
          body: text,
          ...(target.instance ? { instance: target.instance } : {}),
        });
        return "adapter";
      } catch (error) {
        if (!(error instanceof ChannelRateLimitedError) || attempt >= this.maxAttempts) throw error;
        const secs = error.retryAfterSecs ?? this.defaultRetryAfterSecs;
        if (secs > this.maxRetryAfterSecs) throw error;
        await this.wait(secs * 1000);
      }
    }
  }
}
