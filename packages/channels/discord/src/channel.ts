/**
 * The Discord channel as the plugin contract sees it: `start` logs the bot in (discord.js: the
 * gateway for events, the REST API for everything sent), `stop` disconnects it, `send` queues a
 * reply for a conversation, and every message a person sends the bot is published on
 * `plugin.inbound.discord[.<instance>]`. Reconnecting and resuming a dropped gateway session is
 * discord.js's job; this file only logs it.
 *
 * One bot per plugin process (an instance is a label on the topics and picks the registered
 * token). The outbound queue lives under $NEXO_STATE_DIR/outbox and outlives the connection:
 * replies accepted while Discord is unreachable, or before a restart, are sent when the bot runs again.
 *
 * Failures are the contract's typed channel errors:
 *   -33001 Discord cannot be reached at start, the channel is not running, a bad setting
 *   -33002 no token, or Discord refuses it
 *   -33003 a conversation the bot may not post to (outbound allowlist), or Discord refused the message
 *   -33005 a second instance while one runs, a `custom` message, a local file outside the media
 *          directories
 */
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
import {
  type ChatInputCommandInteraction,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  type Message,
  MessageFlags,
  Partials,
  Routes,
} from "discord.js";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
} from "nexo-plugin-sdk";
import { type DiscordConfig, readDiscordConfig } from "./config.js";
import { credentialStore, type Identity, TokenRefusedError, whoAmI } from "./credentials.js";
import {
  type AcceptedInbound,
  commandText,
  decideInbound,
  type InboundMessage,
  threadName,
} from "./inbound.js";
import { downloadFiles } from "./media.js";
import { DiscordSender, isConversationId, type OutboundItem, type PendingInteraction } from "./outbound.js";

type Env = Readonly<Record<string, string | undefined>>;
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

const READY_TIMEOUT_MS = 60_000;
/** Discord shows "typing…" for 10 s after each call; it is renewed until the reply goes out. */
const TYPING_EVERY_MS = 8_000;
/** An interaction's token answers for 15 minutes; a little less, to be safe. */
const INTERACTION_TTL_MS = 14 * 60_000;

export const SLASH_COMMANDS = [
  { name: "new", description: "Start a new conversation with the agent", type: 1 },
  { name: "help", description: "What you can do here", type: 1 },
];

export interface DiscordChannelOptions {
  kind: string;
  env: Env;
  publish: (topic: string, event: Event) => Promise<void>;
  log: (line: string) => void;
  /** Every token the channel uses is registered here before it is used. */
  redactor: Redactor;
}

export interface StartInfo {
  bot_user_id: string;
  bot_name: string;
  application_id: string;
  guilds: number;
  instance: string | null;
}

interface Running {
  instance: string | null;
  config: DiscordConfig;
  token: string;
  client: Client;
  me: Identity;
  info: StartInfo;
}

export class DiscordChannel {
  private running: Running | undefined;
  private readonly steps = new SerialSteps();
  private readonly stateDir: string;
  private readonly outbox: Outbox<OutboundItem>;
  private readonly contacts: KnownContacts;
  private readonly sender: DiscordSender;
  private readonly interactions = new Map<string, PendingInteraction>();
  private readonly typing: TypingIndicator;
  private inboundLimiter: RateLimiter;
  readonly credentials: CredentialFiles<string>;

  constructor(private readonly options: DiscordChannelOptions) {
    const config = this.configOrDefaults();
    this.stateDir = config.stateDir;
    this.credentials = credentialStore(this.stateDir);
    this.contacts = new KnownContacts(join(this.stateDir, "known-conversations.json"));
    mkdirSync(join(this.stateDir, "media", "out"), { recursive: true, mode: 0o700 });
    this.typing = new TypingIndicator({
      show: (contact) => this.running?.client.rest.post(Routes.channelTyping(contact)),
      everyMs: TYPING_EVERY_MS,
      log: (line) => options.log(line),
    });
    this.sender = new DiscordSender(
      () => this.running?.client.rest,
      new MediaRoots(config.mediaDirs),
      (to) => this.takeInteraction(to),
    );
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    this.outbox = new Outbox<OutboundItem>({
      dir: join(this.stateDir, "outbox"),
      deliver: async (record) => {
        const ids = await this.sender.deliver(record);
        this.typing.stop(record.to);
        return ids;
      },
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

  /** Plugin shutdown: the bot disconnects and the queue's sends in flight finish; the queue stays on disk. */
  async close(): Promise<void> {
    await this.stop();
    await this.outbox.stop();
  }

  /**
   * A newly registered token: saved, and a running channel of that instance reconnects with it.
   * While the bot runs, the new token is first checked with GET /users/@me: a token Discord refuses
   * (or that cannot be checked) is not saved and the running bot keeps its own.
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
      await identify(token, running.config.apiUrl, "the new token");
      this.credentials.save(instance, token);
      this.options.log(`a new token was registered for ${instanceLabel(instance)}: reconnecting`);
      await this.stopNow();
      await this.startNow(instance);
    });
  }

  /** `channel.send_outbound`: queued durably, then answered once Discord took it (or still queued). */
  async send(msg: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }> {
    assertSendable(msg, "the Discord channel");
    let { text, attachments } = outgoingContent(msg);
    // Links are posted as links (Discord shows a preview); only local files are uploaded.
    const links = attachments.filter((a) => a.path === undefined && a.url !== undefined);
    attachments = attachments.filter((a) => a.path !== undefined);
    text = [text, ...links.map((a) => (a.caption ? `${a.caption}: ${a.url}` : a.url!))]
      .filter((part) => part !== "")
      .join("\n");
    const to = msg.to.trim();
    if (!isConversationId(to)) {
      throw new ChannelRecipientError(`"${msg.to}" is not a Discord channel id (a DM, channel or thread)`, {
        recipient: msg.to,
        reason: "not a channel id",
      });
    }
    const refusal = this.policy().refusal(to);
    if (refusal !== undefined)
      throw new ChannelRecipientError(`${to} ${refusal}`, { recipient: to, reason: refusal });
    attachments = sendableAttachments(attachments, text, (path) => this.sender.checkPath(path), {
      feature: "local files outside DISCORD_MEDIA_DIRS",
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
      message: `Discord did not take the message for ${to}`,
      recipient: to,
    });
  }

  private policy(): OutboundPolicy {
    return OutboundPolicy.parse(
      this.running?.config.outboundAllowed ?? this.options.env.DISCORD_OUTBOUND_ALLOWED,
      this.contacts,
    );
  }

  private configOrDefaults(): DiscordConfig {
    return settingsOrDefaults(readDiscordConfig, this.options.env);
  }

  private async startNow(instance: string | null): Promise<StartInfo> {
    if (isRunningInstance(this.running, instance, "the Discord channel serves one bot"))
      return this.running.info;
    const config = settingsForStart(() => readDiscordConfig(this.options.env));
    const token = this.credentials.get(instance) ?? config.envBotToken;
    if (token === undefined) {
      throw new ChannelAuthenticationError(
        `no bot token for ${instanceLabel(instance)}: set DISCORD_BOT_TOKEN for the plugin, or register one (credentials/register)`,
      );
    }
    this.options.redactor.add(token);
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    const me = await identify(token, config.apiUrl, "the bot token");
    const intents = [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.DirectMessages,
    ];
    if (config.messageContent) intents.push(GatewayIntentBits.MessageContent);
    const client = new Client({
      intents,
      // Direct-message channels are not in the cache until a message arrives in one.
      partials: [Partials.Channel],
      allowedMentions: { parse: [] },
      // The outbox retries (and survives restarts): the REST client must not retry on its own.
      rest: { api: config.apiUrl, cdn: config.cdnUrl, retries: 0, timeout: 30_000 },
    });
    const running: Running = {
      instance,
      config,
      token,
      client,
      me,
      info: { bot_user_id: me.id, bot_name: me.username, application_id: "", guilds: 0, instance },
    };
    client.on(Events.MessageCreate, (message) => {
      this.onMessage(running, message).catch((error: Error) =>
        this.options.log(`a message could not be handled: ${error.message}`),
      );
    });
    client.on(Events.InteractionCreate, (interaction) => {
      this.onInteraction(running, interaction).catch((error: Error) =>
        this.options.log(`a command could not be handled: ${error.message}`),
      );
    });
    client.on(Events.Error, (error) => this.options.log(`gateway error: ${error.message}`));
    client.on(Events.Warn, (warning) => this.options.log(`discord.js: ${warning}`));
    client.on(Events.ShardDisconnect, (event) =>
      this.options.log(`gateway disconnected (code ${event.code}): discord.js reconnects`),
    );
    client.on(Events.ShardResume, () => this.options.log("gateway session resumed"));
    try {
      const ready = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no READY from the gateway in ${READY_TIMEOUT_MS / 1000} s`)),
          READY_TIMEOUT_MS,
        );
        client.once(Events.ClientReady, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      await client.login(token);
      await ready;
    } catch (error) {
      await client.destroy().catch(() => undefined);
      const message = (error as Error).message;
      if (/disallowed intent/i.test(message)) {
        throw new ChannelConnectionError(
          "Discord refused the Message Content intent: enable it for the bot (Developer Portal → Bot → Privileged Gateway Intents) or set DISCORD_MESSAGE_CONTENT=off",
        );
      }
      if (/token/i.test(message))
        throw new ChannelAuthenticationError(`Discord refused the bot token: ${message}`);
      throw new ChannelConnectionError(`cannot connect to Discord's gateway: ${message}`);
    }
    running.info.application_id = client.application?.id ?? "";
    running.info.guilds = client.guilds.cache.size;
    if (config.registerCommands && client.application !== null) {
      try {
        await client.application.commands.set(SLASH_COMMANDS);
      } catch (error) {
        this.options.log(`the /new and /help commands could not be registered: ${(error as Error).message}`);
      }
    }
    this.running = running;
    this.outbox.start();
    const queued = this.outbox.queued().length;
    this.options.log(
      `connected as @${me.username} in ${running.info.guilds} server(s)${instance === null ? "" : ` for instance ${instance}`}; ` +
        `${config.allowedUsers.everyone ? "everyone" : `${config.allowedUsers.size} user(s)`} allowed` +
        `${queued > 0 ? `; ${queued} queued message(s) to send` : ""}`,
    );
    return running.info;
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    this.typing.stopAll();
    await this.outbox.stop();
    await running.client
      .destroy()
      .catch((error: Error) => this.options.log(`disconnecting: ${error.message}`));
    this.options.log(`disconnected @${running.me.username}`);
  }

  private async onMessage(running: Running, message: Message): Promise<void> {
    if (this.running !== running) return;
    const inThread = message.channel.isThread();
    const view: InboundMessage = {
      id: message.id,
      type: message.type,
      channelId: message.channelId,
      guildId: message.guildId ?? undefined,
      authorId: message.author.id,
      authorIsBot: message.author.bot,
      webhookId: message.webhookId ?? undefined,
      content: message.content,
      mentionsMe: message.mentions.users.has(running.me.id),
      inThread,
      knownThread: inThread && this.contacts.has(message.channelId),
      attachments: [...message.attachments.values()].map((a) => ({
        url: a.url,
        name: a.name,
        contentType: a.contentType ?? undefined,
        size: a.size,
      })),
    };
    const decision = decideInbound(view, running.me, running.config);
    if ("ignore" in decision) {
      this.options.log(`message ignored: ${decision.ignore}`);
      return;
    }
    let contact = message.channelId;
    if (decision.accept.startThread) {
      contact = await this.startThread(running, message.channelId, message.id, decision.accept.text);
    }
    await this.publish(running, contact, decision.accept, message.id);
  }

  /** A thread from the message that mentioned the bot; the channel itself when that is refused. */
  private async startThread(
    running: Running,
    channelId: string,
    messageId: string,
    text: string,
  ): Promise<string> {
    try {
      const thread = (await running.client.rest.post(Routes.threads(channelId, messageId), {
        body: { name: threadName(text), auto_archive_duration: 1440 },
      })) as { id?: string };
      if (typeof thread.id === "string" && isConversationId(thread.id)) return thread.id;
      throw new Error("no thread id in the answer");
    } catch (error) {
      this.options.log(
        `no thread started in ${channelId}, answering in the channel: ${(error as Error).message}`,
      );
      return channelId;
    }
  }

  private async onInteraction(running: Running, interaction: Interaction): Promise<void> {
    if (this.running !== running || !interaction.isChatInputCommand()) return;
    const command = interaction as ChatInputCommandInteraction;
    const text = commandText(command.commandName);
    if (text === undefined) return;
    const guildId = command.guildId ?? undefined;
    const allowed =
      running.config.allowedUsers.allows(command.user.id) &&
      (guildId === undefined || running.config.allowedGuilds.allows(guildId));
    if (!allowed || command.channelId === null) {
      this.options.log(`command /${command.commandName} from ${command.user.id} refused: not allowed`);
      await command.reply({
        content: "You are not allowed to talk to this agent.",
        flags: MessageFlags.Ephemeral,
      });
      return;
    }
    // The daemon answers /new and /help; the deferred reply ("thinking…") is edited with its answer.
    await command.deferReply();
    // Unanswered commands (a reply dropped or never written) are forgotten once their token expires.
    for (const [contact, pending] of this.interactions) {
      if (pending.expiresAt <= Date.now()) this.interactions.delete(contact);
    }
    this.interactions.set(command.channelId, {
      applicationId: command.applicationId,
      token: command.token,
      expiresAt: Date.now() + INTERACTION_TTL_MS,
    });
    await this.publish(
      running,
      command.channelId,
      {
        senderId: command.user.id,
        text,
        messageId: `command:${command.id}`,
        direct: guildId === undefined,
        startThread: false,
        attachments: [],
      },
      command.id,
      false,
    );
  }

  private takeInteraction(to: string): PendingInteraction | undefined {
    const pending = this.interactions.get(to);
    this.interactions.delete(to);
    return pending;
  }

  private async publish(
    running: Running,
    contact: string,
    inbound: AcceptedInbound,
    messageId: string,
    showTyping = true,
  ): Promise<void> {
    const wait = this.inboundLimiter.take(inbound.senderId);
    if (wait > 0) {
      this.options.log(
        `message from ${inbound.senderId} in ${contact} dropped: over DISCORD_RATE_PER_MINUTE (next one accepted in ${wait} ms)`,
      );
      return;
    }
    // The conversation becomes known: replies may go to it, and a thread is answered without a mention.
    this.contacts.add(contact);
    if (showTyping) this.typing.start(contact);
    const { attachments, problems } =
      inbound.attachments.length === 0
        ? { attachments: [], problems: [] }
        : await downloadFiles({
            cdnUrl: running.config.cdnUrl,
            stateDir: this.stateDir,
            folder: contact,
            messageId,
            files: inbound.attachments,
            maxBytes: running.config.mediaMaxBytes,
          });
    const topic = `plugin.inbound.${this.options.kind}${running.instance === null ? "" : `.${running.instance}`}`;
    const payload: Record<string, unknown> = {
      contact,
      sender_id: inbound.senderId,
      chat_type: inbound.direct ? "direct" : "channel",
      text: [textWithAttachments(inbound.text, attachments), ...problems].join("\n").trim(),
      message_id: inbound.messageId,
      attachments,
    };
    await this.options.publish(topic, Event.new(topic, this.options.kind, payload));
  }
}

/** GET /users/@me with a bounded wait; Discord's refusal is -33002, anything else -33001. */
async function identify(token: string, apiUrl: string, what: string): Promise<Identity> {
  try {
    return await whoAmI(token, apiUrl);
  } catch (error) {
    if (error instanceof TokenRefusedError) {
      throw new ChannelAuthenticationError(`Discord refused ${what} (HTTP ${error.status})`);
    }
    throw new ChannelConnectionError(`cannot reach Discord at ${apiUrl}: ${(error as Error).message}`);
  }
}
