/**
 * The durable inbox (issue 10.19): inbound channel messages between their arrival and the commit
 * of their turn. `pending` lists what a killed daemon left undone, oldest first; `done` marks a
 * message handled, once its reply reached the channel (`answered` keeps the reply until then, so
 * a failed send is retried instead of lost). Done rows are kept for `dedupRetentionMs` so that a
 * redelivery of the same message id is recognised, then `sweep` deletes them.
 *
 * Two ways to write. `accept`, `answered` and `done` commit before they return (WAL, so a SIGKILL
 * right after keeps the row). The router stages its writes instead (`stageAccept`, `stageReply`,
 * `stageDone`): every write staged in one turn of the event loop is committed in one transaction
 * (a group commit, scheduled with setImmediate), and `committed()` says when. One commit per tick
 * instead of one per write is what makes the inbox cheap under load; the caller keeps the order
 * the guarantees need — a message is acknowledged, and its turn starts, only after its row is
 * committed; a reply is sent only after it is kept. Seqs of staged messages are handed out here
 * (the store is the inbox's only writer), so a staged accept answers at once.
 *
 * Bounded: at most `maxPending` messages wait at once; beyond that an accept throws InboxFullError
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

/** A write staged for the next group commit. */
type StagedWrite =
  | { op: "insert"; params: unknown[] }
  | { op: "reply"; seq: number; reply: string }
  | { op: "done"; seq: number; atMs: number };

interface PendingCommit {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class InboxRepository {
  readonly maxPending: number;
  private readonly dedupRetentionMs: number;
  /** Accepted (staged ones included) and not done as far as a commit has told. */
  private pendingCount: number;
  private nextSeq: number;
  private staged: StagedWrite[] = [];
  /** Dedup keys of the staged accepts: a redelivery within the same tick is still a duplicate. */
  private stagedKeys = new Map<string, number>();
  private stagedAccepts = 0;
  private commit: PendingCommit | undefined;
  private scheduled = false;
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
      `INSERT INTO inbox (seq, dedup_key, kind, instance, contact, account, sender_id, message_id, text, attachments, received_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING`,
    );
    this.findKey = db.prepare("SELECT seq FROM inbox WHERE dedup_key = ?").pluck();
    this.markDone = db.prepare("UPDATE inbox SET done_at_ms = ? WHERE seq = ? AND done_at_ms IS NULL");
    this.keepReply = db.prepare("UPDATE inbox SET reply = ? WHERE seq = ? AND done_at_ms IS NULL");
    // The store is the inbox's only writer, so the count and the next seq are kept in memory after
    // these queries.
    this.pendingCount = db
      .prepare("SELECT count(*) FROM inbox WHERE done_at_ms IS NULL")
      .pluck()
      .get() as number;
    this.nextSeq = (db.prepare("SELECT COALESCE(MAX(seq), 0) FROM inbox").pluck().get() as number) + 1;
  }

  /** Messages accepted and not yet done. */
  get pending(): number {
    return this.pendingCount;
  }

  /**
   * Writes `message` under `dedupKey` before anything else happens to it, committed when this
   * returns. Throws InboxFullError when `maxPending` messages are waiting.
   */
  accept(dedupKey: string, message: InboxMessage): InboxAcceptance {
    const acceptance = this.stageAccept(dedupKey, message);
    this.flush();
    return acceptance;
  }

  /**
   * `accept`, committed with the rest of this tick's writes: the message may be acknowledged (and
   * its turn start) once `committed()` resolves. Throws InboxFullError when `maxPending` messages
   * are waiting.
   */
  stageAccept(dedupKey: string, message: InboxMessage): InboxAcceptance {
    if (dedupKey === "") throw new StoreError("invalid_argument", "inbox dedup key must not be empty");
    const staged = this.stagedKeys.get(dedupKey);
    if (staged !== undefined) return { accepted: false, duplicateOf: staged };
    // One lookup in the unique index costs far less than the write a conflict would have wasted.
    const seen = this.findKey.get(dedupKey) as number | undefined;
    if (seen !== undefined) return { accepted: false, duplicateOf: seen };
    if (this.pendingCount >= this.maxPending) throw new InboxFullError(this.maxPending);
    const seq = this.nextSeq++;
    this.stage({
      op: "insert",
      params: [
        seq,
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
      ],
    });
    this.stagedKeys.set(dedupKey, seq);
    this.stagedAccepts++;
    this.pendingCount++;
    return { accepted: true, seq };
  }

  /**
   * Keeps the reply of a message whose turn has ended, until the channel has taken it (`done`).
   * Redacted like the transcript's copy, so a reply sent again after a restart is the redacted one.
   */
  answered(seq: number, reply: string): void {
    this.stageReply(seq, reply);
    this.flush();
  }

  /** `answered`, committed with the rest of this tick's writes (see `committed()`). */
  stageReply(seq: number, reply: string): void {
    this.stage({ op: "reply", seq, reply: redact(reply).text });
  }

  /** Marks a message handled; marking it twice is harmless. */
  done(seq: number): void {
    this.stageDone(seq);
    this.flush();
  }

  /**
   * `done`, committed with the rest of this tick's writes. A kill before that commit leaves the
   * message undone: the next start sends its kept reply once more (a duplicate, never a loss).
   */
  stageDone(seq: number): void {
    this.stage({ op: "done", seq, atMs: this.now().getTime() });
  }

  /**
   * Resolves once every write staged so far is committed; rejects with the StoreError when that
   * commit failed (none of its writes happened then). Resolves at once when nothing is staged.
   */
  committed(): Promise<void> {
    if (this.staged.length === 0) return Promise.resolve();
    if (this.commit === undefined) {
      let resolve!: () => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // Handled here so that a failure nobody awaits yet is not an unhandled rejection; every
      // caller that awaits the promise still sees it.
      promise.catch(() => {});
      this.commit = { promise, resolve, reject };
    }
    return this.commit.promise;
  }

  /** Commits the staged writes now, in one transaction. Throws the StoreError when that failed. */
  flush(): void {
    if (this.staged.length === 0) return;
    const writes = this.staged;
    const accepts = this.stagedAccepts;
    const commit = this.commit;
    this.staged = [];
    this.stagedKeys = new Map();
    this.stagedAccepts = 0;
    this.commit = undefined;
    let settled = 0;
    try {
      this.db.transaction(() => {
        for (const write of writes) {
          if (write.op === "insert") {
            // A conflict means another writer took the key meanwhile: that row stands for it.
            if (this.insert.run(...write.params).changes === 0) settled++;
          } else if (write.op === "reply") {
            this.keepReply.run(write.reply, write.seq);
          } else if (this.markDone.run(write.atMs, write.seq).changes > 0) {
            settled++;
          }
        }
      })();
    } catch (error) {
      this.pendingCount -= accepts;
      const failure =
        error instanceof StoreError
          ? error
          : new StoreError("io", `inbox writes failed: ${(error as Error).message}`, { cause: error });
      commit?.reject(failure);
      throw failure;
    }
    this.pendingCount -= settled;
    commit?.resolve();
  }

  private stage(write: StagedWrite): void {
    this.staged.push(write);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.flush();
      } catch {
        // Reported to whoever awaits committed(); the writes were not made.
      }
    });
  }

  /** Every message not yet done, in arrival order (the order a replay must keep). */
  undone(): PendingInboxMessage[] {
    this.flush();
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
    this.flush();
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
