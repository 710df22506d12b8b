/**
 * The durable inbox (issue 10.19): inbound channel messages between their arrival and the commit
 * of their turn. `accept` is one prepared INSERT in autocommit (WAL, so a SIGKILL right after it
 * returns keeps the row); `pending` lists what a killed daemon left undone, oldest first; `done`
 * marks a message handled, once its reply reached the channel (`answered` keeps the reply until
 * then, so a failed send is retried instead of lost). Done rows are kept for `dedupRetentionMs`
 * so that a redelivery of the same message id is recognised, then `sweep` deletes them.
 *
 * Bounded: at most `maxPending` messages wait at once; beyond that `accept` throws InboxFullError
 * (its own type, so the router counts the refusal apart from other store failures). The message text is redacted before it is written,
 * like every other text the store keeps; the routing fields (contact, account, ids) are not,
 * because replies must still reach their recipient.
 */
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";
import { redact } from "./redact.js";

/**
 * A file a channel plugin downloaded for a message (the local part of the channels' shared
 * attachment shape), kept so that a message replayed after a crash still shows its pictures.
 */
export interface InboxAttachment {
  path: string;
  kind?: string;
  mimeType?: string;
  fileName?: string;
}

/** An inbound message as the inbox keeps it. */
export interface InboxMessage {
  kind: string;
  instance: string | undefined;
  contact: string;
  account: string | undefined;
  senderId: string | undefined;
  messageId: string | undefined;
  text: string;
  attachments?: readonly InboxAttachment[];
}

export interface PendingInboxMessage extends InboxMessage {
  attachments: readonly InboxAttachment[];
  seq: number;
  receivedAtMs: number;
  /** The answer its turn gave, when the turn ended and the reply has not reached the channel yet. */
  reply: string | undefined;
}

export interface InboxOptions {
  /** Messages waiting at once before `accept` refuses (default 10,000). */
  maxPending?: number;
  /** How long done rows are kept to recognise a redelivered message (default 24 h). */
  dedupRetentionMs?: number;
}

export const DEFAULT_INBOX_MAX_PENDING = 10_000;
export const DEFAULT_INBOX_DEDUP_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The inbox holds `maxPending` messages not yet handled: the new one is refused, not queued. */
export class InboxFullError extends Error {
  override readonly name = "InboxFullError";
  constructor(readonly maxPending: number) {
    super(`the inbox is full: ${maxPending} inbound messages are waiting for their turn`);
  }
}

/** What `accept` did: a new row (with its seq), or a message already seen under the same key. */
export type InboxAcceptance = { accepted: true; seq: number } | { accepted: false; duplicateOf: number };

interface Row {
  seq: number;
  kind: string;
  instance: string | null;
  contact: string;
  account: string | null;
  sender_id: string | null;
  message_id: string | null;
  text: string;
  attachments: string | null;
  received_at_ms: number;
  reply: string | null;
}

export class InboxRepository {
  readonly maxPending: number;
  private readonly dedupRetentionMs: number;
  private pendingCount: number;
  private readonly insert;
  private readonly findKey;
  private readonly markDone;
  private readonly keepReply;

  constructor(
    private readonly db: Connection,
    private readonly now: () => Date,
    options: InboxOptions = {},
  ) {
    this.maxPending = options.maxPending ?? DEFAULT_INBOX_MAX_PENDING;
    this.dedupRetentionMs = options.dedupRetentionMs ?? DEFAULT_INBOX_DEDUP_RETENTION_MS;
    if (!Number.isInteger(this.maxPending) || this.maxPending < 1)
      throw new StoreError("invalid_argument", "inbox maxPending must be a positive integer");
    this.insert = db.prepare(
      `INSERT INTO inbox (dedup_key, kind, instance, contact, account, sender_id, message_id, text, attachments, received_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING`,
    );
    this.findKey = db.prepare("SELECT seq FROM inbox WHERE dedup_key = ?").pluck();
    this.markDone = db.prepare("UPDATE inbox SET done_at_ms = ? WHERE seq = ? AND done_at_ms IS NULL");
    this.keepReply = db.prepare("UPDATE inbox SET reply = ? WHERE seq = ? AND done_at_ms IS NULL");
    // The store is the inbox's only writer, so the count is kept in memory after this one query.
    this.pendingCount = db
      .prepare("SELECT count(*) FROM inbox WHERE done_at_ms IS NULL")
      .pluck()
      .get() as number;
  }

  /** Messages accepted and not yet done. */
  get pending(): number {
    return this.pendingCount;
  }

  /**
   * Writes `message` under `dedupKey` before anything else happens to it. Throws InboxFullError
   * when `maxPending` messages are waiting.
   */
  accept(dedupKey: string, message: InboxMessage): InboxAcceptance {
    if (dedupKey === "") throw new StoreError("invalid_argument", "inbox dedup key must not be empty");
    if (this.pendingCount >= this.maxPending) {
      // A redelivery of a message already in the inbox is not a new one: answer it as a duplicate.
      const seen = this.findKey.get(dedupKey) as number | undefined;
      if (seen !== undefined) return { accepted: false, duplicateOf: seen };
      throw new InboxFullError(this.maxPending);
    }
    const result = this.insert.run(
      dedupKey,
      message.kind,
      message.instance ?? null,
      message.contact,
      message.account ?? null,
      message.senderId ?? null,
      message.messageId ?? null,
      redact(message.text).text,
      message.attachments?.length ? JSON.stringify(message.attachments) : null,
      this.now().getTime(),
    );
    if (result.changes === 0) return { accepted: false, duplicateOf: this.findKey.get(dedupKey) as number };
    this.pendingCount++;
    return { accepted: true, seq: Number(result.lastInsertRowid) };
  }

  /**
   * Keeps the reply of a message whose turn has ended, until the channel has taken it (`done`).
   * Redacted like the transcript's copy, so a reply sent again after a restart is the redacted one.
   */
  answered(seq: number, reply: string): void {
    this.keepReply.run(redact(reply).text, seq);
  }

  /** Marks a message handled; marking it twice is harmless. */
  done(seq: number): void {
    if (this.markDone.run(this.now().getTime(), seq).changes > 0) this.pendingCount--;
  }

  /** Every message not yet done, in arrival order (the order a replay must keep). */
  undone(): PendingInboxMessage[] {
    const rows = this.db
      .prepare(
        `SELECT seq, kind, instance, contact, account, sender_id, message_id, text, attachments, received_at_ms, reply
         FROM inbox WHERE done_at_ms IS NULL ORDER BY seq`,
      )
      .all() as Row[];
    return rows.map((row) => ({
      seq: row.seq,
      kind: row.kind,
      instance: row.instance ?? undefined,
      contact: row.contact,
      account: row.account ?? undefined,
      senderId: row.sender_id ?? undefined,
      messageId: row.message_id ?? undefined,
      text: row.text,
      attachments: attachmentsOf(row.attachments),
      receivedAtMs: row.received_at_ms,
      reply: row.reply ?? undefined,
    }));
  }

  /** Deletes done rows older than the dedup retention; returns how many. */
  sweep(): number {
    const before = this.now().getTime() - this.dedupRetentionMs;
    return this.db.prepare("DELETE FROM inbox WHERE done_at_ms IS NOT NULL AND done_at_ms < ?").run(before)
      .changes;
  }
}

/** The kept attachments of a row; a value this build cannot read counts as none (the text still names the files). */
function attachmentsOf(json: string | null): InboxAttachment[] {
  if (json === null) return [];
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value)
      ? value.filter(
          (a): a is InboxAttachment => typeof a === "object" && a !== null && typeof a.path === "string",
        )
      : [];
  } catch {
    return [];
  }
}
