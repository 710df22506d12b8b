/**
 * Sending one queued mail over SMTP (nodemailer). Everything that makes the mail a proper reply
 * was fixed when it was queued (./channel.ts): its own Message-ID (so a retry sends the same
 * mail, and a bounce or a reply can name it), In-Reply-To, References and the "Re:" subject. It
 * carries `Auto-Submitted: auto-replied` (RFC 3834), so other robots — out-of-office responders,
 * other agents — do not answer it.
 *
 * Attachments: a local file (only from the media directories: its path may come from a model) is
 * attached; a URL is not fetched by the plugin (that would let a reply make it request any
 * address, its own machine's included) — it is written into the text as a link.
 *
 * The SMTP server's answers become the queue's verdicts: a 5xx refusal of the mail or of every
 * recipient fails the message at once; 4xx, connection failures and a refused login (a new
 * password may be registered meanwhile) are retried with backoff.
 */
import { statSync } from "node:fs";
import { basename } from "node:path";
import {
  type Attachment,
  MediaPathRefusedError,
  type MediaRoots,
  type OutboxRecord,
  PermanentDeliveryError,
  RetryableDeliveryError,
} from "@nexo/channels-common";
import nodemailer, { type Transporter } from "nodemailer";
import type { EmailConfig, Login } from "./config.js";

export interface OutboundMail {
  /** The recipient's address. */
  address: string;
  subject: string;
  text: string;
  attachments: Attachment[];
  message_id: string;
  in_reply_to?: string;
  references: string[];
  /** The thread (the conversation's contact) it belongs to. */
  contact: string;
}

export type Transport = Transporter;

const TIMEOUT_MS = 30_000;

export function smtpTransport(config: EmailConfig, login: Login): Transport {
  return nodemailer.createTransport({
    host: config.smtp.host,
    port: config.smtp.port,
    secure: config.smtp.security === "tls",
    requireTLS: config.smtp.security === "starttls",
    ignoreTLS: config.smtp.security === "none",
    auth: { user: login.smtp_user ?? login.user, pass: login.smtp_password ?? login.password },
    tls: { rejectUnauthorized: config.rejectUnauthorized },
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    logger: false,
    debug: false,
  });
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  message?: string;
}

/** The verdict for an error from nodemailer. */
export function classify(error: unknown): Error {
  if (error instanceof PermanentDeliveryError || error instanceof RetryableDeliveryError) return error;
  if (error instanceof MediaPathRefusedError) return new PermanentDeliveryError(error.message);
  const smtp = error as SmtpError;
  const reason = smtp?.message ?? String(error);
  if (smtp?.code === "EAUTH")
    return new RetryableDeliveryError(`the SMTP server refused the login: ${reason}`);
  if (typeof smtp?.responseCode === "number" && smtp.responseCode >= 500)
    return new PermanentDeliveryError(reason);
  return new RetryableDeliveryError(reason);
}

export class SmtpSender {
  constructor(
    private readonly running: () => { transport: Transport; config: EmailConfig } | undefined,
    private readonly mediaRoots: MediaRoots,
  ) {}

  /** Throws MediaPathRefusedError when a local file may not be attached. */
  checkPath(path: string): void {
    this.mediaRoots.check(path);
  }

  /** The Outbox's `deliver`: sends the mail; returns its Message-ID. */
  async deliver(record: OutboxRecord<OutboundMail>): Promise<string[]> {
    const running = this.running();
    if (running === undefined) throw new RetryableDeliveryError("the email channel is not running");
    const { config, transport } = running;
    const mail = record.item;
    const links = mail.attachments
      .filter((a) => a.path === undefined && a.url !== undefined)
      .map((a) => `${a.caption ?? a.file_name ?? "Attachment"}: ${a.url}`);
    try {
      const files = mail.attachments
        .filter((a) => a.path !== undefined)
        .map((a) => {
          const real = this.mediaRoots.check(a.path!);
          const size = statSync(real).size;
          if (size > config.maxBytes)
            throw new PermanentDeliveryError(`${a.path}: ${size} bytes is over EMAIL_MAX_BYTES`);
          return {
            path: real,
            filename: a.file_name ?? basename(real),
            ...(a.mime_type === undefined ? {} : { contentType: a.mime_type }),
          };
        });
      const info = await transport.sendMail({
        from:
          config.fromName === undefined ? config.address : { name: config.fromName, address: config.address },
        to: mail.address,
        subject: mail.subject,
        text: [mail.text, ...links].filter((part) => part !== "").join("\n\n"),
        messageId: mail.message_id,
        ...(mail.in_reply_to === undefined ? {} : { inReplyTo: mail.in_reply_to }),
        ...(mail.references.length === 0 ? {} : { references: mail.references }),
        headers: { "Auto-Submitted": "auto-replied", "X-Auto-Response-Suppress": "All" },
        attachments: files,
      });
      const rejected = (info.rejected ?? []).map(String);
      if (rejected.length > 0 && (info.accepted ?? []).length === 0)
        throw new PermanentDeliveryError(`the SMTP server refused ${rejected.join(", ")}: ${info.response}`);
      return [mail.message_id];
    } catch (error) {
      throw classify(error);
    }
  }
}
