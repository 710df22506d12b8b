/**
 * One conversation per email thread. Mail clients tie a reply to what it answers with the
 * Message-ID of the original in `In-Reply-To` and the thread's chain in `References`; the store
 * remembers every Message-ID it has seen or sent, and which thread it belongs to, so a reply —
 * from the person, or to the agent's own reply — lands in the conversation it continues. A mail
 * that names no known message starts a thread, keyed by the first id of its chain (its own
 * Message-ID when it has no chain), so two mails of one thread the plugin missed the start of
 * still meet.
 *
 * A thread's `contact` (what nexo's router keys the session on, and what a reply is addressed to)
 * is `<address of whoever started it>#<12 hex of the thread's root id>`: readable in listings,
 * stable across restarts. The agent's outgoing Message-IDs are remembered with the queue's id, so
 * a bounce that quotes one finds the message that failed.
 *
 * Saved whole (atomically) to threads.json in the plugin's state directory after each change;
 * the oldest threads are forgotten past MAX_THREADS.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "@nexo/channels-common";

export interface Thread {
  contact: string;
  /** The first Message-ID of the thread (whose hash is in the contact). */
  root: string;
  /** The subject without Re:/Fwd: prefixes. */
  subject: string;
  /** Where replies go: the last person who wrote in the thread (their Reply-To or From). */
  reply_to: string;
  /** The Message-ID the next reply answers (In-Reply-To). */
  last_id: string;
  /** The chain the next reply carries (References), oldest first. */
  references: string[];
  updated_at_ms: number;
}

export interface SentMail {
  outbox_id: string;
  to: string;
  contact: string;
}

interface Saved {
  threads: Record<string, Thread>;
  ids: Record<string, string>;
  sent: Record<string, SentMail>;
}

const MAX_THREADS = 5000;
const MAX_SENT = 5000;
/** RFC 5322 suggests trimming long chains; the first id is kept, it names the thread's start. */
const MAX_REFERENCES = 20;

/** `<id@host>` with its brackets, lower-cased host-part untouched: ids compare exactly. */
export function normalizeId(id: string | undefined): string | undefined {
  const trimmed = id?.trim();
  if (trimmed === undefined || trimmed === "") return undefined;
  const inner = trimmed.replace(/^<|>$/g, "").trim();
  if (inner === "" || /[\s<>]/.test(inner)) return undefined;
  return `<${inner}>`;
}

/** Every id in a References / In-Reply-To value (mailparser gives a string or a list). */
export function idsOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(" ") : value;
  return [...text.matchAll(/<[^<>\s]+>/g)].map((m) => m[0]);
}

export function baseSubject(subject: string | undefined): string {
  let out = (subject ?? "").replace(/\s+/g, " ").trim();
  for (;;) {
    const next = out.replace(/^(re|fw|fwd|aw|sv|antw)(\[\d+\])?\s*:\s*/i, "");
    if (next === out) return out;
    out = next;
  }
}

export function replySubject(subject: string): string {
  return subject === "" ? "Re: (no subject)" : `Re: ${subject}`;
}

const hashOf = (root: string): string => createHash("sha256").update(root).digest("hex").slice(0, 12);

function trimChain(chain: string[]): string[] {
  const unique = [...new Set(chain)];
  if (unique.length <= MAX_REFERENCES) return unique;
  return [unique[0]!, ...unique.slice(unique.length - (MAX_REFERENCES - 1))];
}

export class ThreadStore {
  private readonly saved: Saved = { threads: {}, ids: {}, sent: {} };

  constructor(private readonly file: string) {
    try {
      const data = JSON.parse(readFileSync(file, "utf8")) as Partial<Saved>;
      Object.assign(this.saved.threads, data.threads ?? {});
      Object.assign(this.saved.ids, data.ids ?? {});
      Object.assign(this.saved.sent, data.sent ?? {});
    } catch {
      // No file yet (or an unreadable one): no thread is known; the next change rewrites it.
    }
  }

  get(contact: string): Thread | undefined {
    return this.saved.threads[contact];
  }

  /**
   * The thread an inbound mail belongs to, created when it continues none we know. `from` is its
   * sender, `replyTo` where an answer goes.
   */
  inbound(mail: {
    messageId: string;
    inReplyTo: string[];
    references: string[];
    subject: string | undefined;
    from: string;
    replyTo: string;
  }): { thread: Thread; isNew: boolean } {
    const named = [...mail.inReplyTo, ...[...mail.references].reverse()];
    let thread: Thread | undefined;
    for (const id of named) {
      const contact = this.saved.ids[id];
      thread = contact === undefined ? undefined : this.saved.threads[contact];
      if (thread !== undefined) break;
    }
    let isNew = false;
    if (thread === undefined) {
      const root = mail.references[0] ?? mail.inReplyTo[0] ?? mail.messageId;
      const contact = `${mail.from}#${hashOf(root)}`;
      thread = this.saved.threads[contact];
      if (thread === undefined) {
        isNew = true;
        thread = {
          contact,
          root,
          subject: baseSubject(mail.subject),
          reply_to: mail.replyTo,
          last_id: mail.messageId,
          references: [],
          updated_at_ms: Date.now(),
        };
        this.saved.threads[contact] = thread;
      }
    }
    const chain = mail.references.length > 0 ? mail.references : mail.inReplyTo;
    thread.references = trimChain([...chain, mail.messageId]);
    thread.last_id = mail.messageId;
    thread.reply_to = mail.replyTo;
    if (thread.subject === "") thread.subject = baseSubject(mail.subject);
    thread.updated_at_ms = Date.now();
    for (const id of [...chain, mail.messageId]) this.saved.ids[id] = thread.contact;
    this.prune();
    this.save();
    return { thread, isNew };
  }

  /** A thread the agent starts by writing to an address; its first mail's id is the root. */
  outboundStart(to: string, messageId: string, subject: string): Thread {
    const contact = `${to}#${hashOf(messageId)}`;
    const thread: Thread = {
      contact,
      root: messageId,
      subject,
      reply_to: to,
      last_id: "",
      references: [],
      updated_at_ms: Date.now(),
    };
    this.saved.threads[contact] = thread;
    return thread;
  }

  /** The agent's mail in a thread: its id joins the thread (a reply to it continues there). */
  sent(thread: Thread, messageId: string, mail: SentMail): void {
    this.saved.ids[messageId] = thread.contact;
    this.saved.sent[messageId] = mail;
    thread.references = trimChain([...thread.references, messageId]);
    thread.last_id = messageId;
    thread.updated_at_ms = Date.now();
    this.prune();
    this.save();
  }

  /** The agent's mail with this Message-ID, when it was one. */
  sentMail(messageId: string): SentMail | undefined {
    return this.saved.sent[messageId];
  }

  private prune(): void {
    const threads = Object.values(this.saved.threads);
    if (threads.length > MAX_THREADS) {
      threads.sort((a, b) => a.updated_at_ms - b.updated_at_ms);
      const gone = new Set(threads.slice(0, threads.length - MAX_THREADS).map((t) => t.contact));
      for (const contact of gone) delete this.saved.threads[contact];
      for (const [id, contact] of Object.entries(this.saved.ids)) {
        if (gone.has(contact)) delete this.saved.ids[id];
      }
    }
    const sent = Object.keys(this.saved.sent);
    for (const id of sent.slice(0, Math.max(0, sent.length - MAX_SENT))) delete this.saved.sent[id];
  }

  private save(): void {
    writeFileAtomic(this.file, `${JSON.stringify(this.saved)}\n`);
  }
}
