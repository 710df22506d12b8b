/**
 * What an incoming mail becomes, decided without I/O: a bounce (./bounce.ts), ignored (with the
 * reason, for the log), or accepted for the agent with the text it reads.
 *
 * Ignored, so that the agent never talks to a machine in a loop (RFC 3834): mail marked
 * `Auto-Submitted` (other than `no`: out-of-office replies, other bots), mailing-list traffic
 * (`List-Id`, `List-Unsubscribe`, `Precedence: bulk|list|junk`), vacation responders' own
 * markers, mail from the agent's own address, and mail with an empty return path that is not a
 * bounce. Then the sender allowlist (EMAIL_ALLOWED_SENDERS: an address, or its domain).
 *
 * The agent reads the new part of a reply: the quoted history below "On … wrote:" and lines
 * starting with `>` are left out (the session already holds what was said). A mail that starts a
 * thread is prefixed with its subject.
 */
import type { Allowlist } from "@nexo/channels-common";
import { type Bounce, detectBounce } from "./bounce.js";

export interface HeaderView {
  /** A header's first value as text, by lower-case name. */
  get(name: string): string | undefined;
}

export interface InboundMail {
  headers: HeaderView;
  contentType: { value: string; params: Record<string, string> } | undefined;
  fromAddress: string;
  fromName: string;
  replyToAddress: string | undefined;
  subject: string;
  text: string;
  raw: string;
}

export type MailDecision = { bounce: Bounce } | { ignore: string } | { accept: { text: string } };

export interface MailRules {
  ownAddress: string;
  allowedSenders: Allowlist;
}

const LIST_HEADERS = ["list-id", "list-unsubscribe", "list-post", "list-help"];

/** The automatic mail markers; a reason when one is present. */
export function automatic(headers: HeaderView): string | undefined {
  const auto = headers.get("auto-submitted")?.trim().toLowerCase();
  if (auto !== undefined && auto !== "" && !auto.startsWith("no")) return `Auto-Submitted: ${auto}`;
  for (const name of LIST_HEADERS)
    if (headers.get(name) !== undefined) return `a mailing-list mail (${name})`;
  const precedence = headers.get("precedence")?.trim().toLowerCase();
  if (precedence === "bulk" || precedence === "list" || precedence === "junk")
    return `Precedence: ${precedence}`;
  if (headers.get("x-autoreply") !== undefined || headers.get("x-autorespond") !== undefined)
    return "an autoresponder's mail (X-Autoreply)";
  return undefined;
}

/** The new text of a reply, without the quoted history mail clients append. */
export function newText(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const kept: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    // "On Tue, 1 Dec 2026 at 10:00, Alice <a@x> wrote:" (sometimes folded over two lines)
    const joined = `${line} ${lines[index + 1] ?? ""}`;
    if (/^On .{4,200}wrote:\s*$/.test(line) || /^On .{4,200}wrote:\s*$/.test(joined.trim())) {
      if (
        lines
          .slice(index + 1)
          .every((rest) => rest.trim() === "" || rest.startsWith(">") || /wrote:\s*$/.test(rest))
      )
        break;
    }
    if (/^-----\s*Original Message\s*-----/i.test(line)) break;
    if (line.startsWith(">")) continue;
    kept.push(line);
  }
  return kept.join("\n").trim();
}

export function decideMail(mail: InboundMail, rules: MailRules): MailDecision {
  const bounce = detectBounce({
    contentType: mail.contentType,
    fromAddress: mail.fromAddress,
    returnPath: mail.headers.get("return-path"),
    subject: mail.subject,
    failedRecipientsHeader: mail.headers.get("x-failed-recipients"),
    raw: mail.raw,
  });
  if (bounce !== undefined) return { bounce };
  const who = mail.fromAddress === "" ? "a mail without a sender" : `mail from ${mail.fromAddress}`;
  const auto = automatic(mail.headers);
  if (auto !== undefined) return { ignore: `${who}: ${auto}` };
  if (mail.fromAddress === "") return { ignore: who };
  if (mail.fromAddress === rules.ownAddress.toLowerCase())
    return { ignore: `${who}: the agent's own address` };
  const returnPath = mail.headers.get("return-path");
  if (returnPath !== undefined && /^<?\s*>?$/.test(returnPath.trim()))
    return { ignore: `${who}: an empty return path (an automatic mail)` };
  const domain = mail.fromAddress.slice(mail.fromAddress.lastIndexOf("@") + 1);
  if (!rules.allowedSenders.allows(mail.fromAddress, domain))
    return { ignore: `${who} is not in EMAIL_ALLOWED_SENDERS` };
  return { accept: { text: newText(mail.text) } };
}
