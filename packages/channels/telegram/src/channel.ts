/**
 * The Telegram channel as the plugin contract sees it: `start` connects the bot (long polling or a
 * webhook), `stop` disconnects it, `send` queues a reply for the chat, and every message a person
 * sends the bot is published on `plugin.inbound.telegram[.<instance>]` for nexo's router.
 *
 * One bot per plugin process (an instance is a label on the topics and picks the registered
 * token). The outbound queue lives under $NEXO_STATE_DIR/outbox and outlives the bot: messages
 * accepted while Telegram is unreachable, or before a restart, are sent when the bot runs again.
 *
 * Failures are the contract's typed channel errors:
 *   -33001 Telegram cannot be reached at start, the channel is not running, a bad setting
 *   -33002 no token, or Telegram refuses it
 *   -33003 a chat the bot may not send to (outbound allowlist), or Telegram refused the message
 *   -33005 a second instance while one runs, a `custom` message, a local file outside the media
 *          directories
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
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
  type OutboxRecord,
  outgoingContent,
  RateLimiter,
  type Redactor,
  SerialSteps,
  sendableAttachments,
  settingsForStart,
  settingsOrDefaults,
  TypingIndicator,
  textWithAttachments,
} from "@nexo/channels-common";
import { Api, Bot, GrammyError } from "grammy";
import type { Message, UserFromGetMe } from "grammy/types";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
} from "nexo-plugin-sdk";
import { readTelegramConfig, type TelegramConfig } from "./config.js";
import { credentialStore } from "./credentials.js";
import { decideInbound } from "./inbound.js";
import { downloadFiles } from "./media.js";
import { type OutboundItem, TelegramSender } from "./outbound.js";
import { WebhookListener } from "./webhook.js";

type Env = Readonly<Record<string, string | undefined>>;
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

export interface TelegramChannelOptions {
  kind: string;
  env: Env;
  publish: (topic: string, event: Event) => Promise<void>;
  log: (line: string) => void;
  /** Every token and webhook secret the channel uses is registered here before it is used. */
  redactor: Redactor;
}

export interface StartInfo {
  mode: "polling" | "webhook";
  bot_id: number;
  bot_username: string;
  instance: string | null;
  webhook_listener?: string;
}

interface Running {
  instance: string | null;
  config: TelegramConfig;
  token: string;
  bot: Bot;
  me: UserFromGetMe;
  polling: Promise<void> | undefined;
  webhook: WebhookListener | undefined;
  info: StartInfo;
}

const GETME_TIMEOUT_SECS = 15;

export class TelegramChannel {
  private running: Running | undefined;
  private readonly steps = new SerialSteps();
  private readonly stateDir: string;
  private readonly outbox: Outbox<OutboundItem>;
  private readonly contacts: KnownContacts;
  private readonly typing: TypingIndicator;
  private readonly sender: TelegramSender;
  private inboundLimiter: RateLimiter;
  /** The last addressed message per group chat: the agent's answer quotes it. */
  private readonly lastInGroup = new Map<string, number>();
  readonly credentials: CredentialFiles<string>;

  constructor(private readonly options: TelegramChannelOptions) {
    const config = this.configOrDefaults();
    this.stateDir = config.stateDir;
    this.credentials = credentialStore(this.stateDir);
    this.contacts = new KnownContacts(join(this.stateDir, "known-chats.json"));
    // Telegram shows a chat action for about five seconds.
    this.typing = new TypingIndicator({
      show: (chatId) => this.running?.bot.api.sendChatAction(chatId, "typing"),
      everyMs: 4_000,
      log: (line) => options.log(line),
    });
    mkdirSync(join(this.stateDir, "media", "out"), { recursive: true, mode: 0o700 });
    this.sender = new TelegramSender(() => this.running?.bot.api, new MediaRoots(config.mediaDirs));
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    this.outbox = new Outbox<OutboundItem>({
      dir: join(this.stateDir, "outbox"),
      deliver: (record) => this.deliver(record),
      limiter: RateLimiter.perMinute(config.sendPerMinute),
      log: (line) => options.log(line),
    });
  }

  get apiRoot(): string {
    return this.running?.config.apiRoot ?? this.configOrDefaults().apiRoot;
  }

  start(instance: string | null): Promise<StartInfo> {
    return this.steps.run(() => this.startNow(instance));
  }

  stop(): Promise<void> {
    return this.steps.run(() => this.stopNow());
  }

  /** Plugin shutdown: the bot stops and the queue's sends in flight finish; the queue stays on disk. */
  async close(): Promise<void> {
    await this.stop();
    await this.outbox.stop();
  }

  /**
   * A newly registered token: saved, and a running channel of that instance switches to it. While
   * a bot runs, the new token is first checked with getMe: one Telegram refuses (or that cannot be
   * checked) is not saved and the running bot keeps its token — a typo must not take the channel
   * down.
   */
  async rotate(instance: string | null, token: string): Promise<void> {
    this.options.redactor.add(token);
    await this.steps.run(async () => {
      const running = this.running;
      if (running === undefined || running.instance !== instance) {
        this.credentials.save(instance, token);
        return;
      }
      if (running.token === token) return;
      await getMe(token, running.config.apiRoot, "the new token");
      this.credentials.save(instance, token);
      this.options.log(`a new token was registered for ${instanceLabel(instance)}: reconnecting`);
      await this.stopNow();
      await this.startNow(instance);
    });
  }

  /** `channel.send_outbound`: queued durably, then answered once Telegram took it (or still queued). */
  async send(msg: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }> {
    assertSendable(msg, "the Telegram channel");
    const { text, attachments } = outgoingContent(msg);
    const item: OutboundItem = { text, attachments, done: 0, ids: [] };
    const to = msg.to.trim();
    if (!/^-?\d{1,20}$/.test(to)) {
      throw new ChannelRecipientError(`"${msg.to}" is not a Telegram chat id`, {
        recipient: msg.to,
        reason: "not a chat id",
      });
    }
    const refusal = this.policy().refusal(to);
    if (refusal !== undefined)
      throw new ChannelRecipientError(`chat ${to} ${refusal}`, { recipient: to, reason: refusal });
    item.attachments = sendableAttachments(
      item.attachments,
      item.text,
      (path) => this.sender.checkPath(path),
      {
        feature: "local files outside TELEGRAM_MEDIA_DIRS",
        leftOut: (reason) => this.options.log(`reply to ${to}: attachment left out: ${reason}`),
      },
    );
    if (item.text === "" && item.attachments.length === 0) {
      throw new ChannelUnsupportedError("nothing to send: the message is empty", {
        feature: "empty messages",
      });
    }
    const replyTo = this.lastInGroup.get(to);
    if (replyTo !== undefined) {
      item.reply_to = replyTo;
      this.lastInGroup.delete(to);
    }
    const record = this.outbox.enqueue(to, item);
    const waitMs = this.running?.config.sendWaitMs ?? 0;
    return this.outbox.receipt(record, waitMs, {
      message: `Telegram did not take the message for chat ${to}`,
      recipient: to,
    });
  }

  private async deliver(record: OutboxRecord<OutboundItem>): Promise<string[]> {
    try {
      return await this.sender.deliver(record);
    } finally {
      this.typing.stop(record.to);
    }
  }

  private policy(): OutboundPolicy {
    return OutboundPolicy.parse(
      this.running?.config.outboundAllowed ?? this.options.env.TELEGRAM_OUTBOUND_ALLOWED,
      this.contacts,
    );
  }

  private configOrDefaults(): TelegramConfig {
    return settingsOrDefaults(readTelegramConfig, this.options.env);
  }

  private async startNow(instance: string | null): Promise<StartInfo> {
    if (isRunningInstance(this.running, instance, "the Telegram channel serves one bot"))
      return this.running.info;
    const config = settingsForStart(() => readTelegramConfig(this.options.env));
    const token = this.credentials.get(instance) ?? config.envToken;
    if (token === undefined) {
      throw new ChannelAuthenticationError(
        `no bot token for ${instanceLabel(instance)}: set TELEGRAM_BOT_TOKEN for the plugin, or register one (credentials/register)`,
      );
    }
    this.options.redactor.add(token);
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    const bot = new Bot(token, { client: { apiRoot: config.apiRoot } });
    const me = await getMe(token, config.apiRoot, "the bot token");
    bot.botInfo = me;
    const running: Running = {
      instance,
      config,
      token,
      bot,
      me,
      polling: undefined,
      webhook: undefined,
      info: { mode: config.mode, bot_id: me.id, bot_username: me.username, instance },
    };
    bot.on("message", (ctx) => this.onMessage(running, ctx.message));
    bot.catch((error) =>
      this.options.log(`an update could not be handled: ${(error.error as Error)?.message ?? error.message}`),
    );
    if (config.mode === "webhook") await this.startWebhook(running);
    else running.polling = this.poll(running);
    this.running = running;
    this.outbox.start();
    const queued = this.outbox.queued().length;
    this.options.log(
      `connected as @${me.username} (bot id ${me.id}) by ${config.mode === "webhook" ? "webhook" : "long polling"}` +
        `${instance === null ? "" : ` for instance ${instance}`}; ${config.allowedUsers.everyone ? "everyone" : `${config.allowedUsers.size} user(s)`} allowed` +
        `${queued > 0 ? `; ${queued} queued message(s) to send` : ""}`,
    );
    return running.info;
  }

  private poll(running: Running): Promise<void> {
    const { bot, config } = running;
    return bot
      .start({ timeout: config.pollTimeoutSecs, allowed_updates: ["message"], drop_pending_updates: false })
      .catch((error: unknown) => {
        if (this.running !== running) return;
        const why =
          error instanceof GrammyError && error.error_code === 401
            ? "Telegram refused the bot token (revoked?); register a new one"
            : error instanceof GrammyError && error.error_code === 409
              ? "another client is polling with this token, or a webhook is set"
              : (error as Error).message;
        this.options.log(`long polling stopped: ${why}`);
      });
  }

  private async startWebhook(running: Running): Promise<void> {
    const hook = running.config.webhook!;
    const secret = hook.secret ?? randomBytes(24).toString("base64url");
    this.options.redactor.add(secret);
    const listener = new WebhookListener({
      host: hook.host,
      port: hook.port,
      path: hook.url.pathname,
      secret,
      onUpdate: (update) => running.bot.handleUpdate(update as Parameters<Bot["handleUpdate"]>[0]),
      log: this.options.log,
    });
    let address: { host: string; port: number };
    try {
      address = await listener.listen();
    } catch (error) {
      throw new ChannelConnectionError(
        `cannot listen on ${hook.host}:${hook.port}: ${(error as Error).message}`,
      );
    }
    try {
      await running.bot.api.setWebhook(hook.url.href, { secret_token: secret, allowed_updates: ["message"] });
    } catch (error) {
      await listener.close();
      throw new ChannelConnectionError(`setWebhook failed: ${(error as Error).message}`);
    }
    running.webhook = listener;
    running.info.webhook_listener = `http://${address.host}:${address.port}${hook.url.pathname}`;
    this.options.log(`webhook ${hook.url.href} set; listening on ${running.info.webhook_listener}`);
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    await this.outbox.stop();
    this.typing.stopAll();
    if (running.webhook !== undefined) await running.webhook.close();
    if (running.bot.isRunning()) await running.bot.stop().catch(() => undefined);
    await running.polling;
    this.options.log(`disconnected @${running.me.username}`);
  }

  private async onMessage(running: Running, message: Message): Promise<void> {
    const decision = decideInbound(message, running.me, running.config);
    if ("ignore" in decision) {
      this.options.log(`message ignored: ${decision.ignore}`);
      return;
    }
    const inbound = decision.accept;
    const wait = this.inboundLimiter.take(inbound.senderId);
    if (wait > 0) {
      this.options.log(
        `message from user ${inbound.senderId} in chat ${inbound.chatId} dropped: over TELEGRAM_RATE_PER_MINUTE (next one accepted in ${wait} ms)`,
      );
      return;
    }
    this.contacts.add(inbound.chatId);
    this.typing.start(inbound.chatId);
    const { attachments, problems } =
      inbound.files.length === 0
        ? { attachments: [], problems: [] }
        : await downloadFiles({
            api: running.bot.api,
            token: running.token,
            apiRoot: running.config.apiRoot,
            stateDir: this.stateDir,
            chatId: inbound.chatId,
            telegramMessageId: inbound.telegramMessageId,
            files: inbound.files,
            maxBytes: running.config.mediaMaxBytes,
          });
    if (inbound.chatType !== "private") this.lastInGroup.set(inbound.chatId, inbound.telegramMessageId);
    const topic = `plugin.inbound.${this.options.kind}${running.instance === null ? "" : `.${running.instance}`}`;
    const payload: Record<string, unknown> = {
      contact: inbound.chatId,
      sender_id: inbound.senderId,
      sender_name: inbound.senderName,
      chat_type: inbound.chatType,
      text: [textWithAttachments(inbound.text, attachments), ...problems].join("\n").trim(),
      message_id: inbound.messageId,
      telegram_message_id: inbound.telegramMessageId,
      attachments,
      timestamp: new Date(message.date * 1000).toISOString(),
      ...(inbound.replyToMessageId === undefined ? {} : { reply_to_message_id: inbound.replyToMessageId }),
    };
    await this.options.publish(topic, Event.new(topic, this.options.kind, payload));
  }
}

/** getMe with a bounded wait; Telegram's refusal is -33002, anything else -33001. */
async function getMe(token: string, apiRoot: string, what: string): Promise<UserFromGetMe> {
  try {
    return await new Api(token, { apiRoot, timeoutSeconds: GETME_TIMEOUT_SECS }).getMe();
  } catch (error) {
    if (error instanceof GrammyError && (error.error_code === 401 || error.error_code === 404)) {
      throw new ChannelAuthenticationError(`Telegram refused ${what} (${error.description})`);
    }
    throw new ChannelConnectionError(`cannot reach the Bot API at ${apiRoot}: ${(error as Error).message}`);
  }
}
