/**
 * The email channel as the plugin contract sees it: `start` logs in to the mailbox and waits for
 * mail (./mailbox.ts), `stop` logs out, `send` queues a mail, and every mail a person sends the
 * agent's address is published on `plugin.inbound.email[.<instance>]` for nexo's router — one
 * conversation per email thread (./threads.ts).
 *
 * One mailbox per plugin process (an instance is a label on the topics and picks the registered
 * login). The outbound queue lives under $NEXO_STATE_DIR/outbox and outlives the connection: mail
 * accepted while the SMTP server is unreachable, or before a restart, is sent when it can be.
 *
 * Failures are the contract's typed channel errors:
 *   -33001 the IMAP server cannot be reached at start, the channel is not running, a bad setting
 *   -33002 no login, or the server refuses it
 *   -33003 a recipient the agent may not write to (outbound allowlist), an unknown thread, or
 *          the SMTP server refused the mail
 *   -33005 a second instance while one runs, a `custom` message, a local file outside the media
 *          directories, an empty message
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Attachment,
  assertSendable,
  ChannelConfigError,
  type CredentialFiles,
  instanceLabel,
  isRunningInstance,
  KnownContacts,
  kindFromMime,
  MediaRoots,
  OutboundPolicy,
  Outbox,
  outgoingContent,
  RateLimiter,
  type Redactor,
  SerialSteps,
  sendableAttachments,
  textWithAttachments,
} from "@nexo/channels-common";
import { type ParsedMail, simpleParser } from "mailparser";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
} from "nexo-plugin-sdk";
import type { Bounce } from "./bounce.js";
import { ADDRESS_SHAPE, type EmailConfig, type Login, type Registered, readEmailConfig } from "./config.js";
import { checkLogin, credentialStore, secretsOf } from "./credentials.js";
import { decideMail, type HeaderView } from "./inbound.js";
import { Mailbox } from "./mailbox.js";
import { type OutboundMail, SmtpSender, smtpTransport, type Transport } from "./outbound.js";
import { idsOf, normalizeId, replySubject, type Thread, ThreadStore } from "./threads.js";

type Env = Readonly<Record<string, string | undefined>>;
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

export interface EmailChannelOptions {
  kind: string;
  env: Env;
  publish: (topic: string, event: Event) => Promise<void>;
  log: (line: string) => void;
  /** Every password the channel uses is registered here before it is used. */
  redactor: Redactor;
}

export interface StartInfo {
  address: string;
  imap: string;
  smtp: string;
  idle: boolean;
  instance: string | null;
}

interface Running {
  instance: string | null;
  config: EmailConfig;
  login: Login;
  transport: Transport;
  mailbox: Mailbox;
  info: StartInfo;
}

const THREAD_CONTACT = /#[0-9a-f]{12}$/;

const safeName = (name: string): string =>
  name
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\.+/, "")
    .slice(0, 100) || "file";

export class EmailChannel {
  private running: Running | undefined;
  private readonly steps = new SerialSteps();
  private readonly stateDir: string;
  private readonly outbox: Outbox<OutboundMail>;
  private readonly contacts: KnownContacts;
  private readonly threads: ThreadStore;
  private readonly sender: SmtpSender;
  private inboundLimiter: RateLimiter;
  readonly credentials: CredentialFiles<Registered>;

  constructor(private readonly options: EmailChannelOptions) {
    this.stateDir = options.env.NEXO_STATE_DIR?.trim() || process.cwd();
    this.credentials = credentialStore(this.stateDir);
    const config = this.config(null);
    this.contacts = new KnownContacts(join(this.stateDir, "known-senders.json"));
    this.threads = new ThreadStore(join(this.stateDir, "threads.json"));
    mkdirSync(join(this.stateDir, "media", "out"), { recursive: true, mode: 0o700 });
    this.sender = new SmtpSender(
      () => this.running,
      new MediaRoots(config instanceof Error ? [join(this.stateDir, "media", "out")] : config.mediaDirs),
    );
    this.inboundLimiter = RateLimiter.perMinute(config instanceof Error ? 10 : config.ratePerMinute);
    this.outbox = new Outbox<OutboundMail>({
      dir: join(this.stateDir, "outbox"),
      deliver: (record) => this.sender.deliver(record),
      limiter: RateLimiter.perMinute(config instanceof Error ? 10 : config.sendPerMinute),
      log: (line) => options.log(line),
    });
    for (const secret of secretsOf(config instanceof Error ? undefined : config.login))
      options.redactor.add(secret);
  }

  /** An instance's settings (its registered mailbox's, if any), or the error that names the bad one. */
  config(
    instance: string | null,
    registered = this.credentials.get(instance),
  ): EmailConfig | ChannelConfigError {
    try {
      return readEmailConfig(this.options.env, registered);
    } catch (error) {
      if (error instanceof ChannelConfigError) return error;
      throw error;
    }
  }

  private configOrThrow(instance: string | null = null, registered?: Registered): EmailConfig {
    const config =
      registered === undefined
        ? (this.running?.config ?? this.config(instance))
        : this.config(instance, registered);
    if (config instanceof ChannelConfigError) {
      throw new ChannelConnectionError(`invalid configuration: ${config.message}`, {
        variable: config.variable,
      });
    }
    return config;
  }

  start(instance: string | null): Promise<StartInfo> {
    return this.steps.run(() => this.startNow(instance));
  }

  stop(): Promise<void> {
    return this.steps.run(() => this.stopNow());
  }

  /** Plugin shutdown: the mailbox logs out and the queue's sends in flight finish; the queue stays on disk. */
  async close(): Promise<void> {
    await this.stop();
    await this.outbox.stop();
  }

  /**
   * A newly registered login: saved, and a running channel of that instance switches to it. While
   * it runs, the new login is first tried on both servers: one they refuse (or that cannot be
   * tried) is not saved and the channel keeps its login — a typo must not take the mailbox down.
   */
  async rotate(instance: string | null, registered: Registered): Promise<void> {
    for (const secret of secretsOf(registered.login)) this.options.redactor.add(secret);
    await this.steps.run(async () => {
      const running = this.running;
      if (running === undefined || running.instance !== instance) {
        this.credentials.save(instance, registered);
        return;
      }
      const config = this.configOrThrow(instance, registered);
      const now = {
        address: running.config.address,
        login: running.login,
        imap: running.config.imap,
        smtp: running.config.smtp,
      };
      if (JSON.stringify(now) === JSON.stringify(registered)) return;
      const check = await checkLogin(config, registered.login);
      if (!check.ok) {
        if (check.auth) throw new ChannelAuthenticationError(`the new login was refused: ${check.detail}`);
        throw new ChannelConnectionError(`the new login could not be checked: ${check.detail}`);
      }
      this.credentials.save(instance, registered);
      this.options.log(`a new login was registered for ${instanceLabel(instance)}: reconnecting`);
      await this.stopNow();
      await this.startNow(instance);
    });
  }

  /** `channel.send_outbound`: queued durably, then answered once the SMTP server took it (or still queued). */
  async send(msg: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }> {
    const config = this.configOrThrow();
    assertSendable(msg, "the email channel");
    let { text, attachments } = outgoingContent(msg, { captionAsText: true });
    const to = msg.to.trim();
    let thread = this.threads.get(to);
    const startsThread = thread === undefined && !THREAD_CONTACT.test(to) && ADDRESS_SHAPE.test(to);
    if (thread === undefined && !startsThread) {
      throw new ChannelRecipientError(`"${msg.to}" is neither a known email thread nor an address`, {
        recipient: msg.to,
        reason: "unknown thread",
      });
    }
    const address = (thread?.reply_to ?? to).toLowerCase();
    const refusal = this.policy(config).refusal(address);
    if (refusal !== undefined)
      throw new ChannelRecipientError(`${address} ${refusal}`, { recipient: to, reason: refusal });
    attachments = sendableAttachments(attachments, text, (path) => this.sender.checkPath(path), {
      feature: "local files outside EMAIL_MEDIA_DIRS",
      leftOut: (reason) => this.options.log(`mail to ${address}: attachment left out: ${reason}`),
    });
    if (text === "" && attachments.length === 0) {
      throw new ChannelUnsupportedError("nothing to send: the message is empty", {
        feature: "empty messages",
      });
    }
    const domain = config.address.slice(config.address.lastIndexOf("@") + 1);
    const messageId = `<${Date.now().toString(36)}.${randomBytes(8).toString("hex")}@${domain}>`;
    let subject: string;
    if (thread === undefined) {
      thread = this.threads.outboundStart(address, messageId, config.subject);
      subject = config.subject;
    } else subject = replySubject(thread.subject);
    const mail: OutboundMail = {
      address,
      subject,
      text,
      attachments,
      message_id: messageId,
      ...(thread.last_id === "" ? {} : { in_reply_to: thread.last_id }),
      references: thread.references,
      contact: thread.contact,
    };
    const id = randomBytes(8).toString("hex");
    this.threads.sent(thread, messageId, { outbox_id: id, to: address, contact: thread.contact });
    const record = this.outbox.enqueue(address, mail, id);
    return this.outbox.receipt(
      record,
      config.sendWaitMs,
      { message: `the mail to ${address} was not sent`, recipient: to },
      () => messageId,
    );
  }

  private policy(config: EmailConfig): OutboundPolicy {
    return OutboundPolicy.parse(config.outboundAllowed, this.contacts);
  }

  private async startNow(instance: string | null): Promise<StartInfo> {
    if (isRunningInstance(this.running, instance, "the email channel serves one mailbox"))
      return this.running.info;
    const config = this.configOrThrow(instance);
    const login = config.login;
    if (login === undefined) {
      throw new ChannelAuthenticationError(
        `no mailbox login for ${instanceLabel(instance)}: set EMAIL_USER and EMAIL_PASSWORD for the plugin, or register one (credentials/register)`,
      );
    }
    for (const secret of secretsOf(login)) this.options.redactor.add(secret);
    this.inboundLimiter = RateLimiter.perMinute(config.ratePerMinute);
    const info: StartInfo = {
      address: config.address,
      imap: `${config.imap.host}:${config.imap.port}`,
      smtp: `${config.smtp.host}:${config.smtp.port}`,
      idle: false,
      instance,
    };
    const running: Running = {
      instance,
      config,
      login,
      transport: smtpTransport(config, login),
      mailbox: new Mailbox({
        config,
        login,
        stateFile: join(this.stateDir, `mailbox-${instance ?? "_default"}.json`),
        handle: (uid, source) => this.onMail(running, uid, source),
        log: (line) => this.options.log(line),
      }),
      info,
    };
    this.running = running;
    try {
      await running.mailbox.start();
    } catch (error) {
      this.running = undefined;
      running.transport.close();
      if ((error as { authenticationFailed?: boolean }).authenticationFailed === true) {
        throw new ChannelAuthenticationError(
          `the IMAP server ${config.imap.host} refused the login of ${login.user}`,
        );
      }
      throw new ChannelConnectionError(
        `cannot open ${config.mailbox} on the IMAP server ${info.imap}: ${(error as Error).message}`,
      );
    }
    info.idle = running.mailbox.idle;
    this.outbox.start();
    const queued = this.outbox.queued().length;
    this.options.log(
      `reading ${config.mailbox} of ${config.address} on ${info.imap} (${info.idle ? "IDLE" : "polling"}, every ${config.pollSecs} s besides)` +
        `${instance === null ? "" : ` for instance ${instance}`}; sending through ${info.smtp}; ` +
        `${config.allowedSenders.everyone ? "every sender" : `${config.allowedSenders.size} sender(s)`} allowed` +
        `${queued > 0 ? `; ${queued} queued mail(s) to send` : ""}`,
    );
    // The SMTP login is checked in the background: a refusal is worth a log line, not a failed start
    // (the queue retries; a new login may be registered).
    running.transport.verify().catch((error: Error) => {
      if (this.running === running)
        this.options.log(`the SMTP server ${info.smtp} is not usable yet: ${error.message}`);
    });
    return info;
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    await this.outbox.stop();
    await running.mailbox.stop();
    running.transport.close();
    this.options.log(`disconnected from ${running.info.imap}`);
  }

  private async onMail(running: Running, uid: number, source: Buffer): Promise<void> {
    let parsed: ParsedMail;
    try {
      parsed = await simpleParser(source, { skipImageLinks: true, skipTextLinks: true });
    } catch (error) {
      this.options.log(`mail uid ${uid} cannot be parsed (${(error as Error).message}); left as read`);
      return;
    }
    const headers = headerView(parsed);
    const from = parsed.from?.value[0];
    const fromAddress = (from?.address ?? "").toLowerCase();
    const replyTo = (parsed.replyTo?.value[0]?.address ?? fromAddress).toLowerCase();
    const contentType = parsed.headers.get("content-type") as
      | { value: string; params: Record<string, string> }
      | undefined;
    const decision = decideMail(
      {
        headers,
        contentType,
        fromAddress,
        fromName: from?.name ?? "",
        replyToAddress: replyTo,
        subject: parsed.subject ?? "",
        text: parsed.text ?? "",
        raw: source.toString("latin1"),
      },
      { ownAddress: running.config.address, allowedSenders: running.config.allowedSenders },
    );
    if ("bounce" in decision) {
      this.onBounce(decision.bounce, fromAddress);
      return;
    }
    if ("ignore" in decision) {
      this.options.log(`mail uid ${uid} ignored: ${decision.ignore}`);
      return;
    }
    const wait = this.inboundLimiter.take(fromAddress);
    if (wait > 0) {
      this.options.log(
        `mail uid ${uid} from ${fromAddress} dropped: over EMAIL_RATE_PER_MINUTE (next one accepted in ${wait} ms)`,
      );
      return;
    }
    const messageId =
      normalizeId(parsed.messageId) ??
      `<${createHash("sha256").update(source).digest("hex").slice(0, 24)}@nexo-email.invalid>`;
    const { thread, isNew } = this.threads.inbound({
      messageId,
      inReplyTo: idsOf(parsed.inReplyTo),
      references: idsOf(parsed.references),
      subject: parsed.subject,
      from: fromAddress,
      replyTo,
    });
    this.contacts.add(replyTo);
    const { attachments, problems } = this.saveAttachments(running, thread, uid, parsed);
    const body = decision.accept.text;
    const text = [
      isNew && thread.subject !== "" ? `Subject: ${thread.subject}\n` : "",
      textWithAttachments(body, attachments),
      ...problems,
    ]
      .filter((part) => part !== "")
      .join("\n")
      .trim();
    const topic = `plugin.inbound.${this.options.kind}${running.instance === null ? "" : `.${running.instance}`}`;
    const payload: Record<string, unknown> = {
      contact: thread.contact,
      sender_id: fromAddress,
      sender_name: from?.name || fromAddress,
      text,
      message_id: messageId,
      subject: parsed.subject ?? "",
      thread_root: thread.root,
      attachments,
      timestamp: (parsed.date ?? new Date()).toISOString(),
    };
    await this.options.publish(topic, Event.new(topic, this.options.kind, payload));
  }

  private saveAttachments(
    running: Running,
    thread: Thread,
    uid: number,
    parsed: ParsedMail,
  ): { attachments: Attachment[]; problems: string[] } {
    const attachments: Attachment[] = [];
    const problems: string[] = [];
    const dir = join(this.stateDir, "media", "in", safeName(thread.contact.replace("#", "-")));
    for (const [index, part] of parsed.attachments.entries()) {
      // Images a message's HTML shows inline (logos, signatures) are not the person's files.
      if (part.related === true && part.filename === undefined) continue;
      const label = part.filename === undefined ? part.contentType : `"${part.filename}"`;
      if (part.size > running.config.maxBytes) {
        problems.push(
          `[${label} not saved: ${part.size} bytes is over the ${running.config.maxBytes}-byte limit]`,
        );
        continue;
      }
      const name = `${uid}-${index}-${safeName(part.filename ?? `attachment-${index}`)}`;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const path = join(dir, name);
      writeFileSync(path, part.content, { mode: 0o600 });
      attachments.push({
        kind: kindFromMime(part.contentType),
        path,
        mime_type: part.contentType,
        size_bytes: part.content.length,
        ...(part.filename === undefined ? {} : { file_name: part.filename }),
      });
    }
    return { attachments, problems };
  }

  /** A bounce is never shown to the agent; the mail it names is marked failed in the delivery log. */
  private onBounce(bounce: Bounce, from: string): void {
    const ours = bounce.quotedIds
      .map((id) => ({ id, sent: this.threads.sentMail(id) }))
      .filter((entry) => entry.sent !== undefined);
    if (ours.length === 0) {
      this.options.log(
        `a bounce from ${from || "<>"} names no mail this channel sent (${bounce.recipients.join(", ") || "no recipient"}: ${bounce.reason}); not shown to the agent`,
      );
      return;
    }
    for (const { id, sent } of ours) {
      const recipient = sent!.to;
      if (bounce.recipients.length > 0 && !bounce.recipients.includes(recipient)) continue;
      if (bounce.action === "delayed") {
        this.options.log(`mail ${id} to ${recipient} is delayed (${bounce.reason}); the server still tries`);
        continue;
      }
      this.options.log(
        `bounce from ${from || "<>"}: mail ${id} to ${recipient} was not delivered (${bounce.reason})`,
      );
      this.outbox.markFailed(sent!.outbox_id, recipient, `bounced: ${bounce.reason}`);
    }
  }
}

/** Header values as their text, from the raw lines (mailparser merges some, e.g. List-*). */
function headerView(parsed: ParsedMail): HeaderView {
  const values = new Map<string, string>();
  for (const { key, line } of parsed.headerLines) {
    if (values.has(key)) continue;
    values.set(
      key,
      line
        .slice(line.indexOf(":") + 1)
        .replace(/\r?\n[ \t]+/g, " ")
        .trim(),
    );
  }
  return { get: (name) => values.get(name) };
}
