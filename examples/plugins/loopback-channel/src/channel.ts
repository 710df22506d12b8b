/**
 * The loopback channel as the plugin contract sees it (§5.x): `start` opens the HTTP listener,
 * `stop` closes it, `send` hands a reply to its recipient, and every message a client posts is
 * published on `plugin.inbound.<kind>[.<instance>]` for the daemon's router.
 *
 * Failures are the contract's typed channel errors, so the daemon can act on them:
 *   -33001 the listener cannot be opened (port taken, bad configuration), or it is not running
 *   -33002 a non-loopback address without LOOPBACK_TOKEN
 *   -33003 a recipient no client has used
 *   -33004 the recipient's outbox is full, with `retry_after_secs`
 *   -33005 a second instance while one runs, or a `custom` message
 *
 * One listener per plugin process: an instance is a label on the topics, not a second server,
 * so that one LOOPBACK_PORT is enough to configure the plugin.
 *
 * nexo's optional channel features ride on the same listener: pairing (./pairing.ts: a QR code
 * whose URL is scanned over HTTP), bots (LOOPBACK_BOTS: a message to a bot is delivered to the
 * bot's contact id, where a client can read it like any reply) and the credential persister
 * (./credentials.ts). Each needs the channel started (-33001 otherwise).
 */
import { randomUUID } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRateLimitedError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
  PublishRefusedError,
} from "nexo-plugin-sdk";
import {
  type LoopbackConfig,
  LoopbackConfigError,
  LoopbackTokenRequiredError,
  readLoopbackConfig,
} from "./config.js";
import { LoopbackServer, PostRefusedError } from "./http-server.js";
import {
  type DeliveredMessage,
  type InboundPayload,
  type InboundPost,
  outboundFromEventPayload,
} from "./messages.js";
import { LoopbackPairing, type PairingReport } from "./pairing.js";
import { OutboxFullError, PostOffice, UnknownRecipientError } from "./post-office.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface LoopbackChannelOptions {
  kind: string;
  /** Where the settings are read from at each start (see config.ts). */
  env: Env;
  /**
   * Hands an inbound message to the daemon and resolves once the daemon has taken it (the SDK's
   * `publishAndWait`); a client's POST is answered 202 only then. Rejects with PublishRefusedError
   * when the daemon refused it.
   */
  publish: (topic: string, event: Event) => Promise<unknown>;
  /** Sends a `channel.pairing.update` to the daemon. */
  reportPairing: PairingReport;
  log: (line: string) => void;
}

/** What `channel.start` answers besides `ok`: where clients can reach the channel. */
export interface StartInfo {
  url: string;
  host: string;
  port: number;
  instance: string | null;
  token_required: boolean;
}

/** `channel.send_outbound`'s `msg`, already checked by the SDK: text, media or custom. */
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

/** The outbound shapes this channel can deliver, from `channel.send_outbound` or a broker event. */
type Outbound = { to: string; text: string } | { to: string; url: string; caption?: string };

interface Running {
  instance: string | null;
  config: LoopbackConfig;
  server: LoopbackServer;
  postOffice: PostOffice;
  info: StartInfo;
}

export class LoopbackChannel {
  private running: Running | undefined;
  /** Serialises start and stop, so a stop during a start cannot leave a listener behind. */
  private transition: Promise<unknown> = Promise.resolve();
  /** Replies from broker events that could not be delivered (no reply exists to report them). */
  droppedEvents = 0;

  private readonly pairing: LoopbackPairing;

  constructor(private readonly options: LoopbackChannelOptions) {
    this.pairing = new LoopbackPairing(options.reportPairing, options.log);
  }

  /** The listener's URL while the channel runs. */
  get url(): string | undefined {
    return this.running?.info.url;
  }

  /** `channel.pairing.start`: a QR code scannable on this channel's listener. */
  startPairing(challengeId: string, hostDeadlineMs: number): Promise<{ expires_at_ms?: number }> {
    const running = this.require("pairing");
    return this.pairing.start(challengeId, running.info.url, running.config.pairingTtlMs, hostDeadlineMs);
  }

  cancelPairing(challengeId: string): void {
    this.pairing.cancel(challengeId);
  }

  /** `channel.bots.list`: LOOPBACK_BOTS. */
  bots(): Array<{ jid: string; persona_id: string }> {
    const { config } = this.require("bots");
    return [...config.bots].map(([jid, persona_id]) => ({ jid, persona_id }));
  }

  /** `channel.bots.send`: delivered to the bot's contact id; returns the message id. */
  sendToBot(botJid: string, text: string): string {
    const { config } = this.require("bots");
    if (!config.bots.has(botJid)) {
      throw new ChannelRecipientError(`no bot ${botJid} on this channel`, {
        recipient: botJid,
        reason: "not one of LOOPBACK_BOTS",
      });
    }
    return this.deliver({ to: botJid, text }).message_id;
  }

  private require(feature: string): Running {
    if (this.running === undefined)
      throw new ChannelConnectionError(
        `the loopback channel is not started (channel.start before ${feature})`,
      );
    return this.running;
  }

  start(instance: string | null): Promise<StartInfo> {
    return this.serially(() => this.startNow(instance));
  }

  /** Idempotent: stopping a stopped channel is fine. */
  stop(): Promise<void> {
    return this.serially(() => this.stopNow());
  }

  /** `channel.send_outbound`: throws the contract's channel errors. */
  send(msg: OutboundMessage): { message_id: string; sent_at_unix: number } {
    let outbound: Outbound;
    if (msg.kind === "text") outbound = { to: msg.to, text: msg.body };
    else if (msg.kind === "media") {
      outbound =
        msg.caption === undefined
          ? { to: msg.to, url: msg.url }
          : { to: msg.to, url: msg.url, caption: msg.caption };
    } else {
      throw new ChannelUnsupportedError("the loopback channel delivers text and media messages only", {
        feature: `${msg.kind} messages`,
      });
    }
    const delivered = this.deliver(outbound);
    return { message_id: delivered.message_id, sent_at_unix: delivered.sent_at_unix };
  }

  /**
   * A reply published on `plugin.outbound.<kind>[.<instance>]`. A broker event has nobody to
   * answer, so what cannot be delivered is logged and counted instead of thrown.
   */
  deliverEvent(topic: string, event: Event): void {
    const why = this.undeliverable(topic, event);
    if (why === undefined) return;
    this.droppedEvents++;
    this.options.log(`reply on ${topic} dropped (${this.droppedEvents} so far): ${why}`);
  }

  /** Delivers the event's reply; returns why it could not, if it could not. */
  private undeliverable(topic: string, event: Event): string | undefined {
    const prefix = `plugin.outbound.${this.options.kind}`;
    if (topic !== prefix && !topic.startsWith(`${prefix}.`)) return "not an outbound topic of this channel";
    const instance = topic === prefix ? null : topic.slice(prefix.length + 1);
    if (instance !== null && instance !== this.running?.instance) {
      return `instance "${instance}" is not the running one`;
    }
    const outbound = outboundFromEventPayload(event.payload);
    if ("problem" in outbound) return outbound.problem;
    try {
      this.deliver(outbound);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  private deliver(outbound: Outbound): DeliveredMessage {
    const running = this.running;
    if (running === undefined) {
      throw new ChannelConnectionError("the loopback channel is not started (channel.start first)");
    }
    const message: DeliveredMessage = {
      message_id: randomUUID(),
      kind: "text" in outbound ? "text" : "media",
      ...outbound,
      sent_at_unix: Math.floor(Date.now() / 1000),
    };
    try {
      running.postOffice.deliver(message);
    } catch (error) {
      if (error instanceof UnknownRecipientError) {
        throw new ChannelRecipientError(error.message, {
          recipient: error.recipient,
          reason: "no loopback client has posted as, or is listening for, this contact id",
        });
      }
      if (error instanceof OutboxFullError) {
        throw new ChannelRateLimitedError(error.message, {
          retry_after_secs: running.config.retryAfterSecs,
          recipient: error.recipient,
        });
      }
      throw error;
    }
    return message;
  }

  private async startNow(instance: string | null): Promise<StartInfo> {
    if (this.running !== undefined) {
      if (this.running.instance === instance) return this.running.info;
      throw new ChannelUnsupportedError(
        `instance ${JSON.stringify(this.running.instance)} is running; the loopback channel serves one ` +
          "instance per plugin process (stop it first)",
        { feature: "multiple instances" },
      );
    }
    const config = configOrChannelError(this.options.env);
    const postOffice = new PostOffice(config.outboxLimit);
    const server = new LoopbackServer({
      host: config.host,
      port: config.port,
      token: config.token,
      maxWaitMs: config.maxWaitMs,
      postOffice,
      pairing: this.pairing,
      onPost: (post) => this.publishInbound(instance, post),
      log: this.options.log,
    });
    let address: Awaited<ReturnType<LoopbackServer["listen"]>>;
    try {
      address = await server.listen();
    } catch (error) {
      throw new ChannelConnectionError(
        `cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`,
      );
    }
    const info: StartInfo = {
      url: address.url,
      host: address.host,
      port: address.port,
      instance,
      token_required: config.token !== undefined,
    };
    // Bots are contacts from the start: a message to one waits in its outbox for a client.
    for (const jid of config.bots.keys()) postOffice.touch(jid);
    this.running = { instance, config, server, postOffice, info };
    this.writeEndpointFile(config, info);
    const label = instance === null ? "" : ` (instance ${instance})`;
    this.options.log(
      `listening on ${info.url}${label}; POST /messages, GET /messages?to=ID, GET /stream?to=ID`,
    );
    return info;
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    this.pairing.close();
    await running.server.close();
    if (running.config.endpointFile !== undefined) rmSync(running.config.endpointFile, { force: true });
    this.options.log(`stopped listening on ${running.info.url}`);
  }

  private async publishInbound(
    instance: string | null,
    post: InboundPost,
  ): Promise<{ message_id: string; timestamp: string }> {
    const topic = `plugin.inbound.${this.options.kind}${instance === null ? "" : `.${instance}`}`;
    const payload: InboundPayload = {
      from: post.from,
      text: post.text,
      message_id: randomUUID(),
      timestamp: new Date().toISOString(),
    };
    try {
      await this.options.publish(topic, Event.new(topic, this.options.kind, { ...payload }));
    } catch (error) {
      throw postRefusal(error);
    }
    return { message_id: payload.message_id, timestamp: payload.timestamp };
  }

  /**
   * Tells local clients (chat.ts --endpoint-file) where the channel listens: with port 0 the
   * port is only known now. Written whole (temp file + rename) so a reader never sees half.
   */
  private writeEndpointFile(config: LoopbackConfig, info: StartInfo): void {
    const file = config.endpointFile;
    if (file === undefined) return;
    const temp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify({ ...info, kind: this.options.kind, pid: process.pid })}\n`, {
        mode: 0o600,
      });
      renameSync(temp, file);
    } catch (error) {
      // The channel works without the file; only clients that look for it are affected.
      this.options.log(`cannot write the endpoint file ${file}: ${(error as Error).message}`);
    }
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const result = this.transition.then(step, step);
    this.transition = result.catch(() => undefined);
    return result;
  }
}

function configOrChannelError(env: Env): LoopbackConfig {
  try {
    return readLoopbackConfig(env);
  } catch (error) {
    if (error instanceof LoopbackTokenRequiredError) throw new ChannelAuthenticationError(error.message);
    if (error instanceof LoopbackConfigError) {
      throw new ChannelConnectionError(`invalid configuration: ${error.message}`, {
        variable: error.variable,
      });
    }
    throw error;
  }
}

/**
 * The HTTP answer to a message the daemon refused (docs/plugins.md, acknowledged publish): 503 with
 * Retry-After for what may pass later (inbox or queue full, no acknowledgement), 404 when no agent
 * answers on this channel, 500 for what is this plugin's fault (a topic nexo does not allow it, a
 * message nexo cannot read). Anything else (no answer from the daemon at all) stays a 503.
 */
function postRefusal(error: unknown): unknown {
  if (!(error instanceof PublishRefusedError)) return error;
  const detail = `nexo refused the message (${error.reason})`;
  switch (error.reason) {
    case "not_routed":
      return new PostRefusedError(404, `${detail}: no agent answers on this channel`);
    case "topic_not_allowed":
    case "invalid_message":
      return new PostRefusedError(500, detail);
    default:
      return new PostRefusedError(503, `${detail}; retry later`, error.retryAfterSecs ?? 1);
  }
}
