/**
 * Bounces: the mail a server sends back when it could not deliver one of ours. It must never
 * reach the agent (it would answer the mailer daemon, which bounces again: a loop), and it says
 * which of our mails failed and for whom — that message's delivery status becomes `failed`.
 *
 * Recognised: a delivery status notification (RFC 3464: `multipart/report;
 * report-type=delivery-status`), or a mail from the usual daemon senders (MAILER-DAEMON,
 * postmaster) or with an empty return path and an `X-Failed-Recipients` header or a failure
 * subject — the shapes older servers send. The details are read from the raw text rather than
 * from one MIME layout, because servers differ in how they attach the original: the
 * `Final-Recipient`/`Action`/`Status`/`Diagnostic-Code` fields, and the `Message-ID`s quoted in
 * the body (the returned message or its headers), which name our mail.
 */
export interface Bounce {
  /** failed: undeliverable; delayed: still trying (logged, nothing marked). */
  action: "failed" | "delayed";
  recipients: string[];
  /** Message-IDs quoted in the body: one of them is ours. */
  quotedIds: string[];
  /** The server's words: status and diagnostic, for the delivery log. */
  reason: string;
}

export interface BounceInput {
  contentType: { value: string; params: Record<string, string> } | undefined;
  fromAddress: string;
  returnPath: string | undefined;
  subject: string;
  failedRecipientsHeader: string | undefined;
  /** The whole mail as the server stored it. */
  raw: string;
}

const DAEMON_SENDER = /^(mailer-daemon|postmaster|mail-daemon|mailerdaemon)@/i;
const FAILURE_SUBJECT =
  /undeliver|delivery (status notification|failure|has failed)|returned mail|mail delivery failed|failure notice|delivery incomplete/i;

function fields(raw: string, name: string): string[] {
  const pattern = new RegExp(`^${name}:[ \\t]*(.+(?:\\r?\\n[ \\t]+.+)*)`, "gim");
  return [...raw.matchAll(pattern)].map((m) => m[1]!.replace(/\r?\n[ \t]+/g, " ").trim());
}

const addressIn = (value: string): string | undefined =>
  /([^\s;<>"]+@[^\s;<>"]+)/.exec(value)?.[1]?.toLowerCase();

export function detectBounce(mail: BounceInput): Bounce | undefined {
  const report =
    mail.contentType?.value.toLowerCase() === "multipart/report" &&
    mail.contentType.params["report-type"]?.toLowerCase() === "delivery-status";
  const fromDaemon = DAEMON_SENDER.test(mail.fromAddress);
  const nullSender = mail.returnPath !== undefined && /^<?\s*>?$/.test(mail.returnPath.trim());
  const legacy =
    (fromDaemon || nullSender) &&
    (mail.failedRecipientsHeader !== undefined || FAILURE_SUBJECT.test(mail.subject));
  if (!report && !legacy) return undefined;
  const body = mail.raw.slice(Math.max(0, mail.raw.search(/\r?\n\r?\n/)));
  const recipients = new Set<string>();
  for (const value of [
    ...fields(body, "Final-Recipient"),
    ...fields(body, "Original-Recipient"),
    ...(mail.failedRecipientsHeader === undefined ? [] : mail.failedRecipientsHeader.split(",")),
  ]) {
    const address = addressIn(value);
    if (address !== undefined) recipients.add(address);
  }
  const actions = fields(body, "Action").map((a) => a.toLowerCase());
  const action = actions.length > 0 && actions.every((a) => a === "delayed") ? "delayed" : "failed";
  const quotedIds = fields(body, "Message-ID")
    .map((value) => /<[^<>\s]+>/.exec(value)?.[0])
    .filter((id): id is string => id !== undefined);
  const status = fields(body, "Status")[0];
  const diagnostic = fields(body, "Diagnostic-Code")[0];
  const reason =
    [status === undefined ? undefined : `status ${status}`, diagnostic]
      .filter((part) => part !== undefined)
      .join(": ") || `bounce "${mail.subject}" from ${mail.fromAddress || "<>"}`;
  return { action, recipients: [...recipients], quotedIds: [...new Set(quotedIds)], reason };
}
