/**
 * The Slack channel as the plugin contract sees it: `start` connects the app (Socket Mode or the
 * Events API, through Bolt), `stop` disconnects it, `send` queues a reply for a conversation, and
 * every message a person sends the app is published on `plugin.inbound.slack[.<instance>]`.
 *
 * One Slack app per plugin process (an instance is a label on the topics and picks the registered
 * tokens). The outbound queue lives under $NEXO_STATE_DIR/outbox and outlives the connection:
 * replies accepted while Slack is unreachable, or before a restart, are sent when the app runs again.
 *
 * Failures are the contract's typed channel errors:
 *   -33001 Slack cannot be reached at start, the channel is not running, a bad setting
 *   -33002 no token, or Slack refuses it
 *   -33003 a conversation the app may not post to (outbound allowlist), or Slack refused the message
 *   -33005 a second instance while one runs, a `custom` message, a local file outside the media
 *          directories
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  assertSendable,
  type CredentialFiles,
  instanceLabel,
  isRunningInstance,
  KnownContacts,
  MediaRoots,
  OutboundPolicy,
  Outbox,
  outgoingContent,
  RateLimiter,
  type Redactor,
  SerialSteps,
  sendableAttachments,
  settingsForStart,
  settingsOrDefaults,
  textWithAttachments,
} from "@nexo/channels-common";
import { App, HTTPReceiver, type Logger, LogLevel, type Receiver, SocketModeReceiver } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
} from "nexo-plugin-sdk";
import { parseAddress } from "./address.js";
import { readSlackConfig, type SlackConfig } from "./config.js";
import { credentialStore, type Identity, isAuthRefusal, type SlackTokens, whoAmI } from "./credentials.js";
import { type AcceptedInbound, commandText, decideInbound, type SlackMessageEvent } from "./inbound.js";
import { downloadFiles } from "./media.js";
import { type OutboundItem, SlackSender } from "./outbound.js";

type Env = Readonly<Record<string, string | undefined>>;
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

export interface SlackChannelOptions {
  kind: string;
  env: Env;
  publish: (topic: string, event: Event) => Promise<void>;
  log: (line: string) => void;
  /** Every token and secret the channel uses is registered here before it is used. */
  redactor: Redactor;
}

export interface StartInfo {
  mode: "socket" | "events";
  bot_user_id: string;
  bot_name: string;
  team: string;
  instance: string | null;
  events_listener?: string;
}

interface Running {
  instance: string | null;
  config: SlackConfig;
  tokens: SlackTokens;
  app: App;
  me: Identity;
  info: StartInfo;
}

export class SlackChannel {
  private running: Running | undefined;
  private readonly steps = new SerialSteps();
  private readonly stateDir: string;
  private readonly outbox: Outbox<OutboundItem>;
  private readonly contacts: KnownContacts;
  private readonly sender: SlackSender;
  private inboundLimiter: RateLimiter;
  readonly credentials: CredentialFiles<SlackTokens>;

  constructor(private readonly options: SlackChannelOptions) {
    const config = this.configOrDefaults();
    this.stateDir = config.stateDir;
    this.credentials = credentialStore(this.stateDir);
    this.contacts = new KnownContacts(join(this.stateDir, "known-conversations.json"));
    mkdirSync(join(this.stateDir, "media", "out"), { recursive: true, mode: 0o700 });
    this.sender = new SlackSender(
      () => this.running?.app.client as WebClient | undefined,
      new MediaRoots(config.mediaDirs),
    );
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    this.outbox = new Outbox<OutboundItem>({
      dir: join(this.stateDir, "outbox"),
      deliver: (record) => this.sender.deliver(record),
      limiter: RateLimiter.perMinute(config.sendPerMinute),
      log: (line) => options.log(line),
    });
  }

  get apiUrl(): string {
    return this.running?.config.apiUrl ?? this.configOrDefaults().apiUrl;
  }

  start(instance: string | null): Promise<StartInfo> {
    return this.steps.run(() => this.startNow(instance));
  }

  stop(): Promise<void> {
    return this.steps.run(() => this.stopNow());
  }

  /** Plugin shutdown: the app disconnects and the queue's sends in flight finish; the queue stays on disk. */
  async close(): Promise<void> {
    await this.stop();
    await this.outbox.stop();
  }

  /**
   * Newly registered tokens: saved, and a running channel of that instance switches to them. While
   * the app runs, the new bot token is first checked with auth.test: tokens Slack refuses (or that
   * cannot be checked) are not saved and the running app keeps its own.
   */
  async rotate(instance: string | null, tokens: SlackTokens): Promise<void> {
    this.options.redactor.add(tokens.botToken);
    this.options.redactor.add(tokens.appToken);
    await this.steps.run(async () => {
      const running = this.running;
      if (running === undefined || running.instance !== instance) {
        this.credentials.save(instance, tokens);
        return;
      }
      if (running.tokens.botToken === tokens.botToken && running.tokens.appToken === tokens.appToken) return;
      await identify(tokens.botToken, running.config.apiUrl, "the new bot token");
      this.credentials.save(instance, tokens);
      this.options.log(`new tokens were registered for ${instanceLabel(instance)}: reconnecting`);
      await this.stopNow();
      await this.startNow(instance);
    });
  }

  /** `channel.send_outbound`: queued durably, then answered once Slack took it (or still queued). */
  async send(msg: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }> {
    assertSendable(msg, "the Slack channel");
    let { text, attachments } = outgoingContent(msg);
    // Links are posted as links (Slack shows a preview); only local files are uploaded.
    const links = attachments.filter((a) => a.path === undefined && a.url !== undefined);
    attachments = attachments.filter((a) => a.path !== undefined);
    text = [text, ...links.map((a) => (a.caption ? `<${a.url}|${a.caption}>` : `<${a.url}>`))]
      .filter((part) => part !== "")
      .join("\n");
    const to = msg.to.trim();
    if (parseAddress(to) === undefined) {
      throw new ChannelRecipientError(
        `"${msg.to}" is not a Slack conversation (C…, D…, G…, optionally :thread_ts)`,
        {
          recipient: msg.to,
          reason: "not a conversation id",
        },
      );
    }
    const refusal = this.policy().refusal(to);
    if (refusal !== undefined)
      throw new ChannelRecipientError(`${to} ${refusal}`, { recipient: to, reason: refusal });
    attachments = sendableAttachments(attachments, text, (path) => this.sender.checkPath(path), {
      feature: "local files outside SLACK_MEDIA_DIRS",
      leftOut: (reason) => this.options.log(`reply to ${to}: attachment left out: ${reason}`),
    });
    if (text === "" && attachments.length === 0) {
      throw new ChannelUnsupportedError("nothing to send: the message is empty", {
        feature: "empty messages",
      });
    }
    const record = this.outbox.enqueue(to, { text, attachments, done: 0, ids: [] });
    const waitMs = this.running?.config.sendWaitMs ?? 0;
    return this.outbox.receipt(record, waitMs, {
      message: `Slack did not take the message for ${to}`,
      recipient: to,
    });
  }

  private policy(): OutboundPolicy {
    return OutboundPolicy.parse(
      this.running?.config.outboundAllowed ?? this.options.env.SLACK_OUTBOUND_ALLOWED,
      this.contacts,
    );
  }

  private configOrDefaults(): SlackConfig {
    return settingsOrDefaults(readSlackConfig, this.options.env);
  }

  private async startNow(instance: string | null): Promise<StartInfo> {
    if (isRunningInstance(this.running, instance, "the Slack channel serves one app"))
      return this.running.info;
    const config = settingsForStart(() => readSlackConfig(this.options.env));
    const registered = this.credentials.get(instance);
    const tokens: SlackTokens | undefined =
      registered ??
      (config.envBotToken === undefined
        ? undefined
        : { botToken: config.envBotToken, ...(config.envAppToken ? { appToken: config.envAppToken } : {}) });
    if (tokens === undefined) {
      throw new ChannelAuthenticationError(
        `no bot token for ${instanceLabel(instance)}: set SLACK_BOT_TOKEN for the plugin, or register one (credentials/register)`,
      );
    }
    if (config.mode === "socket" && tokens.appToken === undefined) {
      throw new ChannelAuthenticationError(
        `Socket Mode needs an app-level token for ${instanceLabel(instance)}: set SLACK_APP_TOKEN (xapp-…), register one, or use SLACK_MODE=events`,
      );
    }
    this.options.redactor.add(tokens.botToken);
    this.options.redactor.add(tokens.appToken);
    this.options.redactor.add(config.events?.signingSecret);
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    const me = await identify(tokens.botToken, config.apiUrl, "the bot token");
    const logger = boltLogger(this.options.log);
    // The outbox retries (and survives restarts): the Web API client must not retry on its own
    // for minutes, which would also hold a shutdown until it gives up.
    const clientOptions = {
      slackApiUrl: config.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: 30_000,
    };
    const receiver: Receiver =
      config.mode === "socket"
        ? new SocketModeReceiver({
            appToken: tokens.appToken!,
            logger,
            logLevel: LogLevel.WARN,
            installerOptions: { clientOptions },
          })
        : new HTTPReceiver({
            signingSecret: config.events!.signingSecret,
            endpoints: config.events!.path,
            logger,
            logLevel: LogLevel.WARN,
          });
    const app = new App({
      token: tokens.botToken,
      receiver,
      logger,
      logLevel: LogLevel.WARN,
      clientOptions,
      // auth.test was just answered by identify(); Bolt needs not repeat it before the first event.
      botId: me.botId,
      botUserId: me.userId,
      tokenVerificationEnabled: false,
    });
    const running: Running = {
      instance,
      config,
      tokens,
      app,
      me,
      info: { mode: config.mode, bot_user_id: me.userId, bot_name: me.user, team: me.team, instance },
    };
    app.event("message", async ({ event }) => this.onEvent(running, event as unknown as SlackMessageEvent));
    app.event("app_mention", async ({ event }) =>
      this.onEvent(running, event as unknown as SlackMessageEvent),
    );
    app.command(/.*/, async ({ command, ack }) => {
      await ack();
      await this.onCommand(running, command);
    });
    app.error(async (error) => this.options.log(`an event could not be handled: ${error.message}`));
    try {
      if (config.mode === "socket") {
        await app.start();
      } else {
        const events = config.events!;
        const server = (await app.start({ port: events.port, host: events.host })) as {
          address(): AddressInfo | string | null;
        };
        const address = server.address();
        if (address !== null && typeof address === "object") {
          running.info.events_listener = `http://${address.address}:${address.port}${events.path}`;
        }
      }
    } catch (error) {
      await app.stop().catch(() => undefined);
      throw new ChannelConnectionError(
        `cannot connect to Slack (${config.mode} mode): ${(error as Error).message}`,
      );
    }
    this.running = running;
    this.outbox.start();
    const queued = this.outbox.queued().length;
    this.options.log(
      `connected as @${me.user} in ${me.team} by ${config.mode === "socket" ? "Socket Mode" : `the Events API on ${running.info.events_listener}`}` +
        `${instance === null ? "" : ` for instance ${instance}`}; ${config.allowedUsers.everyone ? "everyone" : `${config.allowedUsers.size} user(s)`} allowed` +
        `${queued > 0 ? `; ${queued} queued message(s) to send` : ""}`,
    );
    return running.info;
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    await this.outbox.stop();
    await running.app.stop().catch((error: Error) => this.options.log(`disconnecting: ${error.message}`));
    this.options.log(`disconnected @${running.me.user}`);
  }

  private async onEvent(running: Running, event: SlackMessageEvent): Promise<void> {
    if (this.running !== running) return;
    const decision = decideInbound(event, running.me, running.config);
    if ("ignore" in decision) {
      this.options.log(`event ignored: ${decision.ignore}`);
      return;
    }
    await this.publish(running, decision.accept, event.ts!);
  }

  private async onCommand(
    running: Running,
    command: { command: string; text: string; user_id: string; channel_id: string; trigger_id?: string },
  ): Promise<void> {
    if (this.running !== running) return;
    if (!running.config.allowedUsers.allows(command.user_id)) {
      this.options.log(`command ignored: user ${command.user_id} is not in SLACK_ALLOWED_USERS`);
      return;
    }
    const text = commandText(command.command, command.text);
    if (text === "") return;
    const ts = `${Math.floor(Date.now() / 1000)}.${randomBytes(3).readUIntBE(0, 3) % 1_000_000}`;
    await this.publish(
      running,
      {
        contact: command.channel_id,
        channel: command.channel_id,
        threadTs: undefined,
        senderId: command.user_id,
        text,
        messageId: `command:${command.trigger_id ?? `${command.channel_id}:${ts}`}`,
        files: [],
        direct: command.channel_id.startsWith("D"),
      },
      ts,
    );
  }

  private async publish(running: Running, inbound: AcceptedInbound, ts: string): Promise<void> {
    const wait = this.inboundLimiter.take(inbound.senderId);
    if (wait > 0) {
      this.options.log(
        `message from ${inbound.senderId} in ${inbound.contact} dropped: over SLACK_RATE_PER_MINUTE (next one accepted in ${wait} ms)`,
      );
      return;
    }
    // The conversation (a thread is its own) and its channel become known: replies may go to both.
    this.contacts.add(inbound.contact);
    this.contacts.add(inbound.channel);
    const { attachments, problems } =
      inbound.files.length === 0
        ? { attachments: [], problems: [] }
        : await downloadFiles({
            botToken: running.tokens.botToken,
            apiUrl: running.config.apiUrl,
            stateDir: this.stateDir,
            folder: inbound.contact.replace(/[^A-Za-z0-9]/g, "-"),
            messageTs: ts,
            files: inbound.files,
            maxBytes: running.config.mediaMaxBytes,
          });
    const topic = `plugin.inbound.${this.options.kind}${running.instance === null ? "" : `.${running.instance}`}`;
    const payload: Record<string, unknown> = {
      contact: inbound.contact,
      sender_id: inbound.senderId,
      chat_type: inbound.direct ? "direct" : "channel",
      text: [textWithAttachments(inbound.text, attachments), ...problems].join("\n").trim(),
      message_id: inbound.messageId,
      attachments,
      ...(inbound.threadTs === undefined ? {} : { thread_ts: inbound.threadTs }),
    };
    await this.options.publish(topic, Event.new(topic, this.options.kind, payload));
  }
}

/** auth.test with a bounded wait; Slack's refusal is -33002, anything else -33001. */
async function identify(botToken: string, apiUrl: string, what: string): Promise<Identity> {
  try {
    return await whoAmI(botToken, apiUrl);
  } catch (error) {
    if (isAuthRefusal(error)) {
      throw new ChannelAuthenticationError(
        `Slack refused ${what} (${(error as { data?: { error?: string } }).data?.error})`,
      );
    }
    throw new ChannelConnectionError(`cannot reach Slack at ${apiUrl}: ${(error as Error).message}`);
  }
}

/** Bolt's and the Socket Mode client's logs, to the plugin's (redacted) stderr — never stdout. */
function boltLogger(log: (line: string) => void): Logger {
  let level = LogLevel.WARN;
  const order = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR];
  const at =
    (wanted: LogLevel) =>
    (...parts: unknown[]) => {
      if (order.indexOf(wanted) < order.indexOf(level)) return;
      log(
        `bolt ${wanted}: ${parts.map((p) => (p instanceof Error ? p.message : typeof p === "string" ? p : JSON.stringify(p))).join(" ")}`,
      );
    };
  return {
    debug: at(LogLevel.DEBUG),
    info: at(LogLevel.INFO),
    warn: at(LogLevel.WARN),
    error: at(LogLevel.ERROR),
    setLevel: (next) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
