/**
 * The NATS broker, for daemons spread over several machines. Topics are NATS subjects (our topic
 * rules are a subset of NATS's), the payload is the event's JSON, and each `subscribe` is one
 * NATS subscription feeding the same bounded per-subscriber queue as the local broker.
 *
 * Delivery is at most once, as with NATS core. While the connection is down, `publish` refuses
 * with `unavailable` instead of buffering: the client would discard its buffer at the next
 * reconnect attempt anyway, so pretending to accept the event would lose it silently. The
 * client reconnects forever with capped exponential backoff and re-subscribes by itself.
 */
import { readFile } from "node:fs/promises";
import {
  type Authenticator,
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  DebugEvents,
  ErrorCode,
  Events,
  type Msg,
  type NatsConnection,
  NatsError,
  type Status,
} from "nats";
import { createLogger } from "../log.js";
import { type BrokerCommonOptions, BrokerCore, checkDrainTimeout } from "./core.js";
import { BrokerError, describeError } from "./errors.js";
import { decodeEvent } from "./event.js";
import type { QueuedSubscription } from "./subscription.js";
import type {
  Broker,
  BrokerEvent,
  BrokerHandler,
  BrokerReadiness,
  BrokerStats,
  SubscribeOptions,
  Subscription,
  Unlisten,
} from "./types.js";

export interface NatsBrokerOptions extends Partial<BrokerCommonOptions> {
  /** `nats://host:port`, `tls://host:port` or `host:port`; one or several (a cluster). */
  servers: string | string[];
  user?: string;
  pass?: string;
  token?: string;
  /** A NATS `.creds` file (user JWT + nkey seed), read once at connect. */
  credsFile?: string;
  /** The connection name shown in the server's monitoring pages. */
  name?: string;
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** How long the first connection may take before `connect` fails (10 s). */
  connectTimeoutMs?: number;
}

const DEFAULT_RECONNECT_INITIAL_MS = 250;
const DEFAULT_RECONNECT_MAX_MS = 5000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** A half-open TCP connection is noticed after about PING_INTERVAL_MS × MAX_PINGS_OUT. */
const PING_INTERVAL_MS = 10_000;
const MAX_PINGS_OUT = 3;
/** One warning per this period at most for undecodable messages, whoever floods the subject. */
const MALFORMED_LOG_INTERVAL_MS = 10_000;

const encoder = new TextEncoder();

/** Capped exponential backoff with jitter, restarted after every successful reconnect. */
class ReconnectBackoff {
  private attempt = 0;
  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    // Jitter keeps a fleet of daemons from reconnecting in lockstep after a server restart.
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }
  reset(): void {
    this.attempt = 0;
  }
}

/** Server URLs for log lines and errors, without any `user:pass@` they may carry. */
function describeServers(servers: readonly string[]): string {
  return servers.map((server) => server.replace(/\/\/[^/@]*@/, "//***@")).join(", ");
}

function checkDelay(value: number | undefined, fallback: number, key: string): number {
  const delay = value ?? fallback;
  if (!Number.isFinite(delay) || delay < 1) {
    throw new BrokerError("invalid_option", `${key} must be a positive number of milliseconds, got ${delay}`);
  }
  return delay;
}

export class NatsBroker implements Broker {
  readonly kind = "nats" as const;
  private readonly core: BrokerCore;
  private readonly nc: NatsConnection;
  private readonly backoff: ReconnectBackoff;
  private readonly serversText: string;
  private state: BrokerReadiness["state"] = "connected";
  private detail: string;
  private closed: Promise<void> | undefined;
  /** Malformed messages not logged since the last warning, to say how many were skipped quietly. */
  private malformedSuppressed = 0;
  private lastMalformedLog = 0;

  /**
   * Connects to NATS. The first connection must succeed (BrokerError `connect_failed` otherwise),
   * so a mistyped URL or bad credentials stop the daemon at boot instead of leaving it waiting;
   * once connected, the broker reconnects forever.
   */
  static async connect(options: NatsBrokerOptions): Promise<NatsBroker> {
    const servers = typeof options.servers === "string" ? [options.servers] : [...options.servers];
    if (servers.length === 0) throw new BrokerError("invalid_config", "no NATS server given");
    const serversText = describeServers(servers);
    const logger = options.logger ?? createLogger({ base: { component: "broker" } });
    const backoff = new ReconnectBackoff(
      checkDelay(options.reconnect?.initialDelayMs, DEFAULT_RECONNECT_INITIAL_MS, "reconnect.initialDelayMs"),
      checkDelay(options.reconnect?.maxDelayMs, DEFAULT_RECONNECT_MAX_MS, "reconnect.maxDelayMs"),
    );
    const connection: ConnectionOptions = {
      servers,
      name: options.name,
      user: options.user,
      pass: options.pass,
      token: options.token,
      timeout: checkDelay(options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, "connectTimeoutMs"),
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectDelayHandler: () => backoff.next(),
      // "Forever" includes an auth failure after a credentials rotation the operator may still fix.
      ignoreAuthErrorAbort: true,
      pingInterval: PING_INTERVAL_MS,
      maxPingOut: MAX_PINGS_OUT,
    };
    if (options.credsFile !== undefined) connection.authenticator = await readCreds(options.credsFile);
    let nc: NatsConnection;
    try {
      nc = await connect(connection);
    } catch (error) {
      throw new BrokerError(
        "connect_failed",
        `cannot connect to NATS at ${serversText}: ${describeError(error)}`,
        {
          cause: error,
        },
      );
    }
    const broker = new NatsBroker(nc, backoff, serversText, { ...options, logger });
    logger.info(
      { servers: serversText, server: nc.getServer() },
      `broker connected to NATS at ${nc.getServer()}`,
    );
    return broker;
  }

  private constructor(
    nc: NatsConnection,
    backoff: ReconnectBackoff,
    serversText: string,
    options: BrokerCommonOptions,
  ) {
    this.core = new BrokerCore("nats", options);
    this.nc = nc;
    this.backoff = backoff;
    this.serversText = serversText;
    this.detail = `connected to ${nc.getServer()}`;
    void this.watchStatus();
    void nc.closed().then((error) => this.onConnectionClosed(error || undefined));
  }

  publish(topic: string, event: BrokerEvent): void {
    const encoded = this.core.preparePublish(topic, event);
    if (this.state !== "connected") throw this.core.publishUnavailable(topic, this.detail);
    try {
      this.nc.publish(topic, encoder.encode(encoded.json));
    } catch (error) {
      if (error instanceof NatsError && error.code === ErrorCode.MaxPayloadExceeded) {
        throw new BrokerError("too_large", `event is larger than the NATS server's max_payload`, {
          topic,
          cause: error,
        });
      }
      throw this.core.publishUnavailable(topic, describeError(error));
    }
    this.core.countPublished();
  }

  subscribe(pattern: string, handler: BrokerHandler, options?: SubscribeOptions): Subscription {
    if (this.state === "closed" && !this.core.isClosing) {
      throw new BrokerError("closed", `the NATS connection has closed: ${this.detail}`);
    }
    return this.core.addSubscription(pattern, handler, options, (current) => {
      const natsSubscription = this.nc.subscribe(pattern, {
        callback: (error, message) => this.receive(current(), error, message),
      });
      return {
        // The flush round trip proves the server has the SUB; if the connection drops first, the
        // client re-sends the SUB on reconnect, so there is nothing left for a caller to wait for.
        ready: this.nc.flush().catch(() => {}),
        detach: () => {
          try {
            natsSubscription.unsubscribe();
          } catch {
            // The connection is already closed, and the subscription with it.
          }
        },
      };
    });
  }

  stats(): BrokerStats {
    return this.core.stats(this.readiness());
  }

  readiness(): BrokerReadiness {
    if (this.core.isClosing) return { ready: false, state: "closed", detail: "the NATS broker is closed" };
    return { ready: this.state === "connected", state: this.state, detail: this.detail };
  }

  onStatus(listener: (readiness: BrokerReadiness) => void): Unlisten {
    return this.core.onStatus(listener);
  }

  onError(listener: (error: BrokerError) => void): Unlisten {
    return this.core.onError(listener);
  }

  close(options: { drainTimeoutMs?: number } = {}): Promise<void> {
    if (this.closed === undefined) {
      const timeoutMs = checkDrainTimeout(options.drainTimeoutMs);
      this.core.beginClose();
      this.core.emitStatus(this.readiness());
      this.closed = this.shutdown(timeoutMs);
    }
    return this.closed;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    if (!this.nc.isClosed()) {
      // NATS's drain flushes what we published and hands over messages already on their way to
      // our subscriptions; it can hang on a dead connection, hence the deadline.
      await withTimeout(
        this.nc.drain().catch(() => {}),
        timeoutMs,
      );
    }
    await this.core.drainSubscriptions(Math.max(0, deadline - Date.now()));
    if (!this.nc.isClosed()) await this.nc.close().catch(() => {});
    this.state = "closed";
    this.detail = "closed";
    this.core.logger.info({ servers: this.serversText }, "broker disconnected from NATS");
  }

  private receive(subscription: QueuedSubscription | undefined, error: NatsError | null, message: Msg): void {
    if (subscription === undefined || !subscription.isActive) return;
    if (error !== null) {
      const failure = new BrokerError(
        "transport",
        `NATS subscription "${subscription.name}" failed: ${describeError(error)}`,
        { topic: subscription.pattern, subscription: subscription.name, cause: error },
      );
      this.core.logger.warn({ err: error, subscription: subscription.name }, failure.message);
      this.core.emitError(failure);
      return;
    }
    let event: BrokerEvent;
    try {
      event = decodeEvent(message.data, message.subject);
    } catch (decodeError) {
      this.reportMalformed(subscription, message.subject, decodeError);
      return;
    }
    subscription.offer(event, message.subject);
  }

  private reportMalformed(subscription: QueuedSubscription, topic: string, error: unknown): void {
    const failure = new BrokerError(
      "malformed_message",
      `subscriber "${subscription.name}" skipped a message on "${topic}": ${describeError(error)}`,
      { topic, subscription: subscription.name, cause: error },
    );
    const now = Date.now();
    if (now - this.lastMalformedLog >= MALFORMED_LOG_INTERVAL_MS) {
      this.core.logger.warn(
        { topic, subscription: subscription.name, suppressed: this.malformedSuppressed },
        failure.message,
      );
      this.lastMalformedLog = now;
      this.malformedSuppressed = 0;
    } else {
      this.malformedSuppressed++;
    }
    this.core.countMalformed(failure);
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) this.onStatusEvent(status);
  }

  private onStatusEvent(status: Status): void {
    switch (status.type) {
      case Events.Disconnect:
        this.setState("disconnected", `lost the connection to ${String(status.data)}; reconnecting`);
        break;
      case Events.Reconnect:
        this.backoff.reset();
        this.setState("connected", `connected to ${String(status.data)}`);
        break;
      case DebugEvents.Reconnecting:
        this.core.logger.debug({ servers: this.serversText }, "reconnecting to NATS");
        break;
      case Events.LDM:
        this.core.logger.warn({ server: status.data }, "NATS server is entering lame duck mode");
        break;
      case Events.Error: {
        const failure = new BrokerError("transport", `NATS reported an error: ${String(status.data)}`);
        this.core.logger.warn({ code: status.data, context: status.permissionContext }, failure.message);
        this.core.emitError(failure);
        break;
      }
      default:
        break;
    }
  }

  private onConnectionClosed(error: Error | undefined): void {
    const wasClosing = this.core.isClosing;
    this.state = "closed";
    this.detail = error === undefined ? "closed" : `closed: ${describeError(error)}`;
    if (wasClosing) return;
    // The client gave up by itself (it should not, with unlimited reconnects): say so loudly.
    const failure = new BrokerError("transport", `the NATS connection closed for good: ${this.detail}`, {
      cause: error,
    });
    this.core.logger.error({ servers: this.serversText }, failure.message);
    this.core.emitStatus(this.readiness());
    this.core.emitError(failure);
  }

  private setState(state: "connected" | "disconnected", detail: string): void {
    if (this.core.isClosing || this.state === "closed") return;
    const changed = state !== this.state;
    this.state = state;
    this.detail = detail;
    if (!changed) return;
    if (state === "connected") this.core.logger.info({ servers: this.serversText }, `broker ${detail}`);
    else this.core.logger.warn({ servers: this.serversText }, `broker ${detail}`);
    this.core.emitStatus(this.readiness());
  }
}

async function readCreds(path: string): Promise<Authenticator> {
  let contents: Uint8Array;
  try {
    contents = await readFile(path);
  } catch (error) {
    throw new BrokerError(
      "invalid_config",
      `cannot read the NATS creds file ${path}: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
  return credsAuthenticator(contents);
}

/** Settles when `promise` does or after `ms`, whichever comes first; never rejects. */
async function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.then(
      () => {},
      () => {},
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
