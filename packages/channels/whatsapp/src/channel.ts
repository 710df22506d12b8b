/**
 * The WhatsApp channel as the plugin contract sees it: `start` connects the linked device (or
 * waits, unlinked, for a pairing), `stop` disconnects it, `send` queues a reply for a chat, every
 * message a person sends the account is published on `plugin.inbound.whatsapp[.<instance>]`, and
 * the pairing and bots features serve the admin RPC's `pairing/*` and `whatsapp/bot/*`.
 *
 * One WhatsApp account per plugin process (an instance is a label on the topics and picks the
 * stored keys). The outbound queue lives under $NEXO_STATE_DIR/outbox and outlives the
 * connection: replies accepted while WhatsApp is unreachable, or before a restart, are sent when
 * the device is connected again.
 *
 * Failures are the contract's typed channel errors:
 *   -33001 a bad setting, WhatsApp not connected (bots), the channel not running
 *   -33003 a chat the account may not send to (outbound allowlist), or WhatsApp refused it
 *   -33005 a second instance while one runs, a `custom` message, a local file outside the media
 *          directories
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Attachment,
  assertSendable,
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
import type { WAMessage } from "baileys";
import {
  ChannelConnectionError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
  InvalidParamsError,
  type PairingStartParams,
  type PairingStartReply,
  type PairingUpdate,
} from "nexo-plugin-sdk";
import { folderOf, toJid } from "./address.js";
import { AuthStore } from "./auth-store.js";
import { loadBaileys } from "./baileys.js";
import { readWhatsAppConfig, type WhatsAppConfig } from "./config.js";
import { type AcceptedInbound, decideInbound, extensionOf } from "./inbound.js";
import { Link, type UnlinkCause } from "./link.js";
import { type OutboundItem, WhatsAppSender } from "./outbound.js";
import { renderQr } from "./qr.js";
import { baileysLogger, loadTransport, type WhatsAppTransport } from "./transport.js";

type Env = Readonly<Record<string, string | undefined>>;
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

export interface WhatsAppChannelOptions {
  kind: string;
  env: Env;
  publish: (topic: string, event: Event) => Promise<void>;
  pairingUpdate: (update: PairingUpdate) => Promise<void>;
  log: (line: string) => void;
  redactor: Redactor;
}

export interface StartInfo {
  instance: string | null;
  linked: boolean;
  account?: string;
  state: "connecting" | "open" | "needs_pairing";
}

interface Session {
  instance: string | null;
  config: WhatsAppConfig;
  auth: AuthStore;
  link: Link;
  /** channel.start was called (inbound is published only then). */
  started: boolean;
  account: string | undefined;
}

interface Pairing {
  challengeId: string;
  timer: NodeJS.Timeout;
  /** The phone scanned the QR code or took the pairing code: the link is being finished. */
  scanned: boolean;
}

const INSTRUCTIONS =
  "On the phone: WhatsApp → Settings → Linked devices → Link a device, then scan the QR code. A new code replaces the shown one every 20 seconds or so.";
const CODE_INSTRUCTIONS =
  "On the phone: WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, then type the code shown here (WhatsApp may also notify the phone). The code stays the same until it is used or expires.";

/** What Baileys' requestPairingCode takes: E.164 digits, country code first, no `+`. */
const PAIRING_NUMBER = /^[1-9][0-9]{6,14}$/;

export class WhatsAppChannel {
  private session: Session | undefined;
  private pairing: Pairing | undefined;
  private transport: WhatsAppTransport | undefined;
  private readonly steps = new SerialSteps();
  private readonly stateDir: string;
  private readonly outbox: Outbox<OutboundItem>;
  private readonly contacts: KnownContacts;
  private inboundLimiter: RateLimiter;
  /**
   * "typing…" (WhatsApp's composing chat state) in a chat while the agent works on its message;
   * paused when the reply went out. It is per chat: the device still does not mark itself online.
   */
  private readonly typing: TypingIndicator;

  constructor(private readonly options: WhatsAppChannelOptions) {
    const config = this.configOrDefaults();
    this.stateDir = config.stateDir;
    this.contacts = new KnownContacts(join(this.stateDir, "known-chats.json"));
    // WhatsApp lets a composing state lapse after some seconds without a renewal.
    this.typing = new TypingIndicator({
      show: (chat) => this.session?.link.open?.sendPresenceUpdate("composing", chat),
      hide: (chat) => this.session?.link.open?.sendPresenceUpdate("paused", chat),
      everyMs: 10_000,
      log: (line) => options.log(line),
    });
    mkdirSync(join(this.stateDir, "media", "out"), { recursive: true, mode: 0o700 });
    const sender = new WhatsAppSender(() => this.session?.link.open, new MediaRoots(config.mediaDirs));
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    this.outbox = new Outbox<OutboundItem>({
      dir: join(this.stateDir, "outbox"),
      deliver: async (record) => {
        const ids = await sender.deliver(record);
        this.typing.stop(record.to);
        return ids;
      },
      limiter: RateLimiter.perMinute(config.sendPerMinute),
      log: (line) => options.log(line),
    });
    this.sender = sender;
  }

  private readonly sender: WhatsAppSender;

  start(instance: string | null): Promise<StartInfo> {
    return this.steps.run(async () => {
      const session = await this.sessionFor(instance);
      session.started = true;
      if (session.link.status === "idle" && session.auth.linked()) session.link.connect(false);
      if (!session.auth.linked() && this.pairing === undefined)
        this.options.log(
          `${instanceLabel(instance)} is not linked to a phone yet: start a pairing (nexo admin pairing/start) and scan the QR code`,
        );
      return this.info(session);
    });
  }

  stop(): Promise<void> {
    return this.steps.run(() => this.stopNow());
  }

  /** Plugin shutdown: the device disconnects (its keys stay) and the queue's sends in flight finish. */
  async close(): Promise<void> {
    await this.stop();
    await this.outbox.stop();
  }

  // --- pairing --------------------------------------------------------------------------------

  async pairingStart(params: PairingStartParams): Promise<PairingStartReply> {
    const phoneNumber = pairingNumber(params.phone_number);
    if (phoneNumber !== undefined) {
      // Personal data: never in a log line, in either spelling.
      this.options.redactor.add(phoneNumber);
      this.options.redactor.add(`+${phoneNumber}`);
    }
    return this.steps.run(async () => {
      const session = await this.sessionFor(params.instance ?? null);
      if (this.pairing !== undefined) this.endPairing("cancelled", "a newer pairing replaced this one");
      const timer = setTimeout(
        () => void this.steps.run(async () => this.pairingExpired(params.challenge_id)),
        Math.max(0, params.expires_at_ms - Date.now()),
      );
      timer.unref();
      this.pairing = { challengeId: params.challenge_id, timer, scanned: false };
      if (session.auth.linked()) {
        // Already linked: the challenge completes as soon as the device is connected.
        if (session.link.status === "open" && session.account !== undefined) {
          const account = session.account;
          setImmediate(() => this.endPairing("linked", undefined, account));
        } else if (session.link.status === "idle") session.link.connect(false);
        return { instructions: `Already linked as ${session.auth.account()}; nothing to scan.` };
      }
      await session.link.close();
      session.auth.clear();
      session.link.connect(phoneNumber === undefined ? { qr: true } : { phoneNumber });
      return { instructions: phoneNumber === undefined ? INSTRUCTIONS : CODE_INSTRUCTIONS };
    });
  }

  pairingCancel(challengeId: string): Promise<void> {
    return this.steps.run(async () => {
      if (this.pairing?.challengeId !== challengeId) return;
      clearTimeout(this.pairing.timer);
      this.pairing = undefined;
      await this.abandonUnfinishedLink();
    });
  }

  // --- bots -----------------------------------------------------------------------------------

  async botsList(): Promise<Array<{ jid: string; persona_id: string }>> {
    const socket = this.connected();
    const bots = await socket.getBotListV2();
    return bots.map((bot) => ({ jid: bot.jid, persona_id: bot.personaId }));
  }

  async botsSend(botJid: string, text: string): Promise<string> {
    const socket = this.connected();
    const jid = toJid(botJid);
    if (jid === undefined)
      throw new ChannelRecipientError(`"${botJid}" is not a WhatsApp JID`, {
        recipient: botJid,
        reason: "not a JID",
      });
    const sent = await socket.sendMessage(jid, { text });
    const id = sent?.key?.id;
    if (!id)
      throw new ChannelRecipientError(`WhatsApp did not take the message for ${jid}`, { recipient: jid });
    return id;
  }

  // --- outbound -------------------------------------------------------------------------------

  /** `channel.send_outbound`: queued durably, then answered once WhatsApp took it (or still queued). */
  async send(msg: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }> {
    assertSendable(msg, "the WhatsApp channel");
    let { text, attachments } = outgoingContent(msg);
    // Links are sent as text (WhatsApp shows a preview); only local files are sent as media.
    const links = attachments.filter((a) => a.path === undefined && a.url !== undefined);
    attachments = attachments.filter((a) => a.path !== undefined);
    text = [text, ...links.map((a) => (a.caption ? `${a.caption}: ${a.url}` : a.url!))]
      .filter((part) => part !== "")
      .join("\n");
    const to = toJid(msg.to);
    if (to === undefined) {
      throw new ChannelRecipientError(`"${msg.to}" is not a WhatsApp chat (a JID or a phone number)`, {
        recipient: msg.to,
        reason: "not a chat",
      });
    }
    const refusal = this.policy().refusal(to);
    if (refusal !== undefined)
      throw new ChannelRecipientError(`${to} ${refusal}`, { recipient: to, reason: refusal });
    attachments = sendableAttachments(attachments, text, (path) => this.sender.checkPath(path), {
      feature: "local files outside WHATSAPP_MEDIA_DIRS",
      leftOut: (reason) => this.options.log(`reply to ${to}: attachment left out: ${reason}`),
    });
    if (text === "" && attachments.length === 0)
      throw new ChannelUnsupportedError("nothing to send: the message is empty", {
        feature: "empty messages",
      });
    const record = this.outbox.enqueue(to, { text, attachments, done: 0, ids: [] });
    const waitMs = this.session?.link.open === undefined ? 0 : this.session.config.sendWaitMs;
    return this.outbox.receipt(record, waitMs, {
      message: `WhatsApp did not take the message for ${to}`,
      recipient: to,
    });
  }

  // --- internals ------------------------------------------------------------------------------

  private info(session: Session): StartInfo {
    const linked = session.auth.linked();
    const account = session.account ?? session.auth.account();
    return {
      instance: session.instance,
      linked,
      ...(account === undefined || !linked ? {} : { account }),
      state: !linked ? "needs_pairing" : session.link.status === "open" ? "open" : "connecting",
    };
  }

  private connected() {
    const socket = this.session?.link.open;
    if (socket === undefined)
      throw new ChannelConnectionError("WhatsApp is not connected (is the device linked? see pairing/start)");
    return socket;
  }

  private policy(): OutboundPolicy {
    return OutboundPolicy.parse(
      this.session?.config.outboundAllowed ?? this.configOrDefaults().outboundAllowed,
      this.contacts,
    );
  }

  private configOrDefaults(): WhatsAppConfig {
    return settingsOrDefaults(readWhatsAppConfig, this.options.env);
  }

  private async sessionFor(instance: string | null): Promise<Session> {
    if (isRunningInstance(this.session, instance, "the WhatsApp channel serves one account"))
      return this.session;
    const config = settingsForStart(() => readWhatsAppConfig(this.options.env));
    try {
      await loadBaileys();
      this.transport ??= await loadTransport(config.socketModule);
    } catch (error) {
      throw new ChannelConnectionError(`cannot load the WhatsApp client: ${(error as Error).message}`);
    }
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    const auth = new AuthStore(this.stateDir, instance);
    const session: Session = { instance, config, auth, started: false, account: undefined } as Session;
    session.link = new Link(
      this.transport,
      auth,
      {
        qr: (code) => this.onQr(session, code),
        pairingCode: (code) => this.onPairingCode(session, code),
        scanned: () => this.onScanned(session),
        open: (account) => this.onOpen(session, account),
        closed: (reason, final) => {
          if (this.session !== session) return;
          void this.outbox.stop();
          this.options.log(`connection closed: ${reason}${final ? "" : " (reconnecting)"}`);
        },
        unlinked: (reason, cause) => this.onUnlinked(session, reason, cause),
        messages: (messages) => {
          for (const message of messages)
            void this.onMessage(session, message).catch((error: Error) =>
              this.options.log(`a message could not be handled: ${error.message}`),
            );
        },
      },
      (line) => this.options.log(line),
      config.reconnectMaxMs,
    );
    this.session = session;
    return session;
  }

  private async stopNow(): Promise<void> {
    const session = this.session;
    if (session === undefined) return;
    if (this.pairing !== undefined) this.endPairing("cancelled", "the channel stopped");
    this.session = undefined;
    this.typing.stopAll();
    await this.outbox.stop();
    await session.link.close().catch((error: Error) => this.options.log(`disconnecting: ${error.message}`));
    if (session.account !== undefined) this.options.log(`disconnected ${session.account}`);
  }

  private onQr(session: Session, code: string): void {
    if (this.session !== session || this.pairing === undefined) return;
    this.options.redactor.add(code);
    const challengeId = this.pairing.challengeId;
    renderQr(code).then(
      (data) => {
        if (this.pairing?.challengeId !== challengeId) return;
        this.update({ challenge_id: challengeId, state: "qr_ready", data: { ...data } });
      },
      (error: Error) => this.options.log(`the QR code could not be drawn: ${error.message}`),
    );
  }

  private onPairingCode(session: Session, code: string): void {
    if (this.session !== session || this.pairing === undefined) return;
    // Whoever holds the code can link a device to the account: it goes to the operator only.
    this.options.redactor.add(code);
    this.update({
      challenge_id: this.pairing.challengeId,
      state: "awaiting_user",
      data: { pairing_code: code },
    });
  }

  private onScanned(session: Session): void {
    if (this.session !== session || this.pairing === undefined || this.pairing.scanned) return;
    this.pairing.scanned = true;
    this.update({ challenge_id: this.pairing.challengeId, state: "awaiting_user" });
  }

  private onOpen(session: Session, account: string): void {
    if (this.session !== session) return;
    session.account = account;
    this.outbox.start();
    const queued = this.outbox.queued().length;
    this.options.log(
      `connected as ${account}${session.instance === null ? "" : ` for instance ${session.instance}`}; ` +
        `${session.config.allowed.everyone ? "everyone" : `${session.config.allowed.size} number(s)`} allowed` +
        `${queued > 0 ? `; ${queued} queued message(s) to send` : ""}`,
    );
    if (this.pairing !== undefined) this.endPairing("linked", undefined, account);
  }

  private onUnlinked(session: Session, reason: string, cause: UnlinkCause): void {
    if (this.session !== session) return;
    void this.outbox.stop();
    session.account = undefined;
    this.options.log(
      cause === "logged_out"
        ? `${reason}; the stored keys were removed: link the phone again (pairing/start)`
        : `${reason}${cause === "replaced" ? "; not reconnecting (restart the channel to take the session back)" : ""}`,
    );
    if (this.pairing !== undefined) this.endPairing("expired", reason);
  }

  private pairingExpired(challengeId: string): Promise<void> | undefined {
    if (this.pairing?.challengeId !== challengeId) return undefined;
    this.endPairing("expired", "the pairing's deadline passed");
    return this.abandonUnfinishedLink();
  }

  /** A pairing that did not link leaves no socket showing codes and no half-made keys. */
  private async abandonUnfinishedLink(): Promise<void> {
    const session = this.session;
    if (session === undefined || session.auth.linked()) return;
    await session.link.close();
    session.auth.clear();
  }

  private endPairing(state: "linked" | "expired" | "cancelled", error?: string, account?: string): void {
    const pairing = this.pairing;
    if (pairing === undefined) return;
    clearTimeout(pairing.timer);
    this.pairing = undefined;
    this.update({
      challenge_id: pairing.challengeId,
      state,
      data: state === "linked" ? { device_jid: account ?? "" } : { error: error ?? state },
    });
  }

  private update(update: PairingUpdate): void {
    this.options
      .pairingUpdate(update)
      .catch((error: Error) =>
        this.options.log(`pairing update ${update.state} not delivered: ${error.message}`),
      );
  }

  private async onMessage(session: Session, message: WAMessage): Promise<void> {
    if (this.session !== session) return;
    if (!session.started) {
      this.options.log("message ignored: the channel is not started");
      return;
    }
    const decision = decideInbound(message, session.config);
    if ("ignore" in decision) {
      this.options.log(`message ignored: ${decision.ignore}`);
      return;
    }
    const inbound = decision.accept;
    const wait = this.inboundLimiter.take(inbound.sender);
    if (wait > 0) {
      this.options.log(
        `message from ${inbound.sender} dropped: over WHATSAPP_RATE_PER_MINUTE (next one accepted in ${wait} ms)`,
      );
      return;
    }
    this.contacts.add(inbound.chat);
    const socket = session.link.open;
    if (session.config.readReceipts && socket !== undefined) {
      socket
        .readMessages([message.key])
        .catch((error: Error) => this.options.log(`read receipt: ${error.message}`));
    }
    if (session.config.typing) this.typing.start(inbound.chat);
    const { attachments, problems } = await this.download(session, message, inbound);
    const topic = `plugin.inbound.${this.options.kind}${session.instance === null ? "" : `.${session.instance}`}`;
    const payload: Record<string, unknown> = {
      contact: inbound.chat,
      sender_id: inbound.sender,
      chat_type: inbound.group ? "group" : "direct",
      text: [textWithAttachments(inbound.text, attachments), ...problems].join("\n").trim(),
      message_id: inbound.messageId,
      attachments,
      ...(inbound.pushName === undefined ? {} : { sender_name: inbound.pushName }),
    };
    await this.options.publish(topic, Event.new(topic, this.options.kind, payload));
  }

  private async download(
    session: Session,
    message: WAMessage,
    inbound: AcceptedInbound,
  ): Promise<{ attachments: Attachment[]; problems: string[] }> {
    const media = inbound.media;
    const socket = session.link.open;
    if (media === undefined) return { attachments: [], problems: [] };
    const name = safeName(media.fileName ?? `${media.kind}.${extensionOf(media.mime)}`);
    const max = session.config.mediaMaxBytes;
    if (media.size !== undefined && media.size > max)
      return {
        attachments: [],
        problems: [
          `[${media.kind} ${name} not downloaded: ${media.size} bytes is over WHATSAPP_MEDIA_MAX_BYTES]`,
        ],
      };
    if (socket === undefined || this.transport === undefined)
      return {
        attachments: [],
        problems: [`[${media.kind} ${name} not downloaded: WhatsApp is not connected]`],
      };
    try {
      const bytes = await this.transport.downloadMedia(message, socket, baileysLogger(this.options.log));
      if (bytes.length > max)
        return {
          attachments: [],
          problems: [
            `[${media.kind} ${name} not kept: ${bytes.length} bytes is over WHATSAPP_MEDIA_MAX_BYTES]`,
          ],
        };
      const dir = join(this.stateDir, "media", "in", folderOf(inbound.chat));
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, `${safeName(message.key.id ?? "message")}-${name}`);
      writeFileSync(path, bytes, { mode: 0o600 });
      return {
        attachments: [
          {
            kind: media.kind,
            path,
            file_name: name,
            size_bytes: bytes.length,
            ...(media.mime === undefined ? {} : { mime_type: media.mime }),
          },
        ],
        problems: [],
      };
    } catch (error) {
      return {
        attachments: [],
        problems: [`[${media.kind} ${name} could not be downloaded: ${(error as Error).message}]`],
      };
    }
  }
}

/**
 * The admin call's `phone_number` (E.164, checked by the host) as Baileys takes it; a number
 * that is not one is refused here too, as a bad parameter (the plugin can be driven directly).
 */
function pairingNumber(phoneNumber: string | undefined): string | undefined {
  if (phoneNumber === undefined) return undefined;
  const digits = phoneNumber.startsWith("+") ? phoneNumber.slice(1) : phoneNumber;
  if (!PAIRING_NUMBER.test(digits))
    throw new InvalidParamsError(
      "phone_number must be the international number with its country code, digits only (E.164, e.g. +447700900123)",
    );
  return digits;
}

function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100);
  return cleaned === "" || cleaned.startsWith(".") ? `file${cleaned}` : cleaned;
}
