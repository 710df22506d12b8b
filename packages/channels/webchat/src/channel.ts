/**
 * The web chat channel as the plugin contract sees it: `start` opens the listener (./server.ts),
 * `stop` closes it, `send` queues a reply for a visitor, `streamDelta` shows a piece of a reply
 * being written, and every message a visitor sends is published on
 * `plugin.inbound.webchat[.<instance>]` with the visitor's id as the contact — one nexo
 * conversation per visitor.
 *
 * A reply goes through the durable outbox (@nexo/channels-common): written to disk before
 * `channel.send_outbound` is answered, then delivered by adding it to the visitor's history
 * (./history.ts) and pushing it to every widget the visitor has open. A visitor who is away sees
 * it when they come back; a reply queued when the plugin stopped is delivered at the next start.
 *
 * A visitor's message is answered `received` only once nexo acknowledged it (`broker.publish_acked`:
 * it is in the daemon's durable inbox); a refusal is shown to the visitor as such, never as sent.
 *
 * Failures are the contract's typed channel errors:
 *   -33001 a bad setting, the listener cannot bind
 *   -33003 a recipient that is not a visitor who wrote here
 *   -33005 a second instance while one runs, a `custom` message, a local file outside the media
 *          directories
 */

import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Attachment,
  assertSendable,
  isRunningInstance,
  kindFromMime,
  MediaRoots,
  mimeFromName,
  Outbox,
  type OutboxRecord,
  outgoingContent,
  RateLimiter,
  SerialSteps,
  sendableAttachments,
  settingsForStart,
  settingsOrDefaults,
  textWithAttachments,
  writeFileAtomic,
} from "@nexo/channels-common";
import {
  ChannelConnectionError,
  ChannelRecipientError,
  type ChannelSendOutboundHandler,
  ChannelUnsupportedError,
  Event,
  type PublishReceipt,
  PublishRefusedError,
} from "nexo-plugin-sdk";
import { readWebchatConfig, type WebchatConfig } from "./config.js";
import { type HistoryEntry, type ShownFile, VisitorHistory } from "./history.js";
import { type HelloFrame, type MessageFrame, WebchatListener } from "./server.js";
import { VisitorKeys } from "./visitors.js";

type Env = Readonly<Record<string, string | undefined>>;
type OutboundMessage = Parameters<ChannelSendOutboundHandler>[0]["msg"];

/** What the outbox keeps for one reply. */
interface ReplyItem {
  text: string;
  attachments: Attachment[];
}

export interface WebchatChannelOptions {
  kind: string;
  env: Env;
  publishAndWait: (topic: string, event: Event) => Promise<PublishReceipt>;
  log: (line: string) => void;
}

export interface StartInfo {
  url: string;
  instance: string | null;
}

/** How long `channel.send_outbound` waits for the reply to reach the visitor's history. */
const SEND_WAIT_MS = 5_000;
const WIDGET_FILE = fileURLToPath(new URL("./widget/widget.js", import.meta.url));

interface Running {
  instance: string | null;
  config: WebchatConfig;
  listener: WebchatListener;
  info: StartInfo;
}

export class WebchatChannel {
  private running: Running | undefined;
  private readonly steps = new SerialSteps();
  private readonly stateDir: string;
  private readonly keys: VisitorKeys;
  private readonly outbox: Outbox<ReplyItem>;
  private readonly filesDir: string;
  private history: VisitorHistory;
  private limiter: RateLimiter;
  private newVisitors: RateLimiter;
  private mediaRoots: MediaRoots;

  constructor(private readonly options: WebchatChannelOptions) {
    const config = this.configOrDefaults();
    this.stateDir = config.stateDir;
    this.keys = new VisitorKeys(this.stateDir);
    this.filesDir = join(this.stateDir, "files");
    mkdirSync(join(this.stateDir, "media", "out"), { recursive: true, mode: 0o700 });
    this.history = new VisitorHistory(this.stateDir, config.historyMessages);
    this.limiter = perMinute(config.ratePerMinute);
    this.newVisitors = perMinute(config.newVisitorsPerMinute);
    this.mediaRoots = new MediaRoots(config.mediaDirs);
    this.outbox = new Outbox<ReplyItem>({
      dir: join(this.stateDir, "outbox"),
      deliver: (record) => this.deliver(record),
      log: options.log,
    });
  }

  start(instance: string | null): Promise<StartInfo> {
    return this.steps.run(() => this.startNow(instance));
  }

  stop(): Promise<void> {
    return this.steps.run(() => this.stopNow());
  }

  /** Plugin shutdown: the listener closes, deliveries in flight finish; the queue stays on disk. */
  async close(): Promise<void> {
    await this.stop();
    await this.outbox.stop();
  }

  /** `channel.send_outbound`: queued durably, answered once the reply is in the visitor's history. */
  async send(msg: OutboundMessage): Promise<{ message_id: string; sent_at_unix: number }> {
    assertSendable(msg, "the web chat");
    const item: ReplyItem = outgoingContent(msg);
    const to = msg.to.trim();
    if (!VisitorKeys.isId(to) || !this.history.known(to)) {
      throw new ChannelRecipientError(`"${msg.to}" is not a visitor who wrote to this chat`, {
        recipient: msg.to,
        reason: "unknown visitor",
      });
    }
    item.attachments = sendableAttachments(
      item.attachments,
      item.text,
      (path) => this.mediaRoots.check(path),
      {
        feature: "local files outside WEBCHAT_MEDIA_DIRS",
        leftOut: (reason) => this.options.log(`reply to ${to}: attachment left out: ${reason}`),
      },
    );
    if (item.text.trim() === "" && item.attachments.length === 0) {
      throw new ChannelUnsupportedError("nothing to send: the message is empty", {
        feature: "empty messages",
      });
    }
    const record = this.outbox.enqueue(to, item);
    return this.outbox.receipt(
      record,
      this.running === undefined ? 0 : SEND_WAIT_MS,
      { message: `the reply to visitor ${to} failed`, recipient: to },
      (sent) => sent.id,
    );
  }

  /** `channel.reply.delta`: a piece of the reply being written, to the visitor's open widgets. */
  streamDelta(params: { to: string; turn_id: string; text: string }): void {
    this.running?.listener.push(params.to, { type: "delta", stream: params.turn_id, text: params.text });
  }

  private async deliver(record: OutboxRecord<ReplyItem>): Promise<string[]> {
    const files = record.item.attachments.map((attachment) => this.shown(attachment));
    const entry: HistoryEntry = {
      id: record.id,
      from: "agent",
      text: record.item.text,
      ...(files.length > 0 ? { files } : {}),
      at_ms: Date.now(),
    };
    this.history.append(record.to, entry);
    const widgets = this.running?.listener.push(record.to, { type: "reply", entry }) ?? 0;
    this.options.log(`reply ${record.id} for visitor ${record.to}: kept, shown in ${widgets} open widget(s)`);
    return [record.id];
  }

  /** A reply's file as the widget links it: a URL as it is, a local file copied where /files serves it. */
  private shown(attachment: Attachment): ShownFile {
    const name =
      attachment.file_name ?? basename(attachment.path ?? new URL(attachment.url!).pathname) ?? "file";
    const mime = attachment.mime_type ?? mimeFromName(name);
    if (attachment.path === undefined) {
      return { name, url: attachment.url!, kind: attachment.kind, ...(mime ? { mime_type: mime } : {}) };
    }
    const real = this.mediaRoots.check(attachment.path);
    const token = randomBytes(16).toString("hex");
    const safe = name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "") || "file";
    const dir = join(this.filesDir, token);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    copyFileSync(real, join(dir, safe));
    writeFileSync(join(dir, `${safe}.meta.json`), JSON.stringify({ mime_type: mime }), { mode: 0o600 });
    return {
      name,
      url: `/files/${token}/${safe}`,
      kind: attachment.kind,
      ...(mime ? { mime_type: mime } : {}),
    };
  }

  private hello(frame: HelloFrame, remote: string) {
    const running = this.running;
    if (running === undefined) return { refuse: "the chat is not running" };
    let visitor = this.keys.verify(frame.token);
    let token = typeof frame.token === "string" ? frame.token : "";
    if (visitor === undefined) {
      const wait = this.newVisitors.take(remote);
      if (wait > 0)
        return {
          refuse: `too many new visitors from this address; try again in ${Math.ceil(wait / 1000)} s`,
        };
      ({ id: visitor, token } = this.keys.issue());
      this.options.log(`new visitor ${visitor}`);
    }
    return {
      visitor,
      welcome: {
        type: "welcome",
        token,
        visitor,
        title: running.config.title,
        history: this.history.read(visitor),
        limits: {
          max_text_chars: running.config.maxTextChars,
          media_max_bytes: running.config.mediaMaxBytes,
        },
      },
    };
  }

  private async message(visitor: string, frame: MessageFrame): Promise<Record<string, unknown>> {
    const running = this.running;
    const status = (fields: Record<string, unknown>) => ({ type: "status", id: frame.id, ...fields });
    if (running === undefined) return status({ status: "refused", reason: "the chat is not running" });
    const { config } = running;
    const text = frame.text.trim();
    if (text.length > config.maxTextChars)
      return status({ status: "refused", reason: `longer than ${config.maxTextChars} characters` });
    if (text === "" && frame.files.length === 0)
      return status({ status: "refused", reason: "empty message" });
    if (frame.files.length > 0 && config.mediaMaxBytes === 0)
      return status({ status: "refused", reason: "this chat takes no files" });
    const wait = this.limiter.take(visitor);
    if (wait > 0) {
      this.options.log(`message from visitor ${visitor} dropped: over WEBCHAT_RATE_PER_MINUTE`);
      return status({ status: "rate_limited", retry_after_ms: wait, reason: "too many messages" });
    }
    const attachments: Attachment[] = [];
    for (const [index, file] of frame.files.entries()) {
      const bytes = Buffer.from(file.data_base64, "base64");
      if (bytes.length > config.mediaMaxBytes)
        return status({
          status: "refused",
          reason: `${file.name} is larger than ${config.mediaMaxBytes} bytes`,
        });
      const safe =
        file.name
          .replace(/[^A-Za-z0-9._-]/g, "_")
          .replace(/^\.+/, "")
          .slice(-100) || "file";
      const path = join(this.stateDir, "media", "in", visitor, `${frame.id}-${index}-${safe}`);
      writeFileAtomic(path, bytes);
      const mime = file.mime_type || mimeFromName(file.name);
      attachments.push({
        kind: kindFromMime(mime),
        path,
        file_name: file.name,
        size_bytes: statSync(path).size,
        ...(mime ? { mime_type: mime } : {}),
      });
    }
    const topic = `plugin.inbound.${this.options.kind}${running.instance === null ? "" : `.${running.instance}`}`;
    const payload = {
      contact: visitor,
      sender_id: visitor,
      text: textWithAttachments(text, attachments),
      message_id: `${visitor}:${frame.id}`,
      attachments,
      timestamp: new Date().toISOString(),
    };
    let receipt: PublishReceipt;
    try {
      receipt = await this.options.publishAndWait(topic, Event.new(topic, this.options.kind, payload));
    } catch (error) {
      if (!(error instanceof PublishRefusedError)) throw error;
      this.options.log(`message from visitor ${visitor} refused by nexo: ${error.reason}`);
      const busy = ["queue_full", "inbox_full", "not_acknowledged"].includes(error.reason);
      return status({
        status: "refused",
        reason:
          error.reason === "not_routed"
            ? "no agent answers this chat"
            : busy
              ? "busy, try again"
              : error.reason,
        ...(error.retryAfterSecs === undefined ? {} : { retry_after_ms: error.retryAfterSecs * 1000 }),
      });
    }
    this.history.append(visitor, {
      id: frame.id,
      from: "visitor",
      text,
      ...(attachments.length > 0
        ? { files: attachments.map((a) => ({ name: a.file_name ?? "file", url: "", kind: a.kind })) }
        : {}),
      at_ms: Date.now(),
    });
    return status({ status: "received", durable: receipt.acknowledged ? receipt.durable : false });
  }

  private configOrDefaults(): WebchatConfig {
    return settingsOrDefaults(readWebchatConfig, this.options.env);
  }

  private async startNow(instance: string | null): Promise<StartInfo> {
    if (isRunningInstance(this.running, instance, "the web chat serves one instance"))
      return this.running.info;
    const config = settingsForStart(() => readWebchatConfig(this.options.env));
    this.history = new VisitorHistory(this.stateDir, config.historyMessages);
    this.limiter = perMinute(config.ratePerMinute);
    this.newVisitors = perMinute(config.newVisitorsPerMinute);
    this.mediaRoots = new MediaRoots(config.mediaDirs);
    const listener = new WebchatListener(
      {
        host: config.host,
        port: config.port,
        allowedOrigins: config.allowedOrigins,
        // Base64 grows a file by a third; the rest of the frame is small.
        maxFrameBytes: Math.ceil((config.mediaMaxBytes * 4) / 3) + 64 * 1024,
        widgetFile: WIDGET_FILE,
        filesDir: this.filesDir,
        title: config.title,
      },
      {
        hello: (frame, remote) => this.hello(frame, remote),
        message: (visitor, frame) => this.message(visitor, frame),
        log: this.options.log,
      },
    );
    let url: string;
    try {
      url = await listener.listen();
    } catch (error) {
      throw new ChannelConnectionError(
        `cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`,
      );
    }
    const info = { url, instance };
    this.running = { instance, config, listener, info };
    writeFileAtomic(join(this.stateDir, "endpoint.json"), `${JSON.stringify({ url, pid: process.pid })}\n`);
    this.outbox.start();
    const queued = this.outbox.queued().length;
    const origins =
      config.allowedOrigins === "*"
        ? "any origin"
        : (config.allowedOrigins?.join(", ") ?? "its own origin only");
    this.options.log(
      `listening on ${url} (widget: ${url}/widget.js; pages allowed: ${origins})` +
        `${queued > 0 ? `; ${queued} queued repl${queued === 1 ? "y" : "ies"} to deliver` : ""}`,
    );
    return info;
  }

  private async stopNow(): Promise<void> {
    const running = this.running;
    if (running === undefined) return;
    this.running = undefined;
    await this.outbox.stop();
    await running.listener.close();
    this.options.log(`stopped listening on ${running.info.url}`);
  }
}

function perMinute(rate: number): RateLimiter {
  return new RateLimiter({ perMinute: rate, burst: Math.min(10, rate) });
}
