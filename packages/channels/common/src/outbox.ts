/**
 * The outbound queue every channel shares: a message to send is written to disk before anyone is
 * told it was accepted, delivered in order per recipient, retried with backoff when the network
 * says "later", and its delivery status (queued → sent | failed) kept and logged. A restart of the
 * plugin (or of the daemon, which restarts its plugins) loses nothing: what was queued is read
 * back at start and sent then.
 *
 * On disk, under the plugin's state directory:
 *   <dir>/pending/<seq>.json   one file per message not yet settled (replaced whole on each change)
 *   <dir>/delivery.jsonl       one line per settled message: its final status, the network's
 *                              message ids or the reason it failed (rotated to .1 past 1 MiB)
 *
 * Delivery is at least once: a message whose send was cut by a crash is sent again at the next
 * start, because the queue cannot know whether the network got it.
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ChannelRecipientError } from "nexo-plugin-sdk";
import { writeFileAtomic } from "./files.js";
import type { RateLimiter } from "./rate-limit.js";

export type DeliveryStatus = "queued" | "sent" | "failed";

export interface OutboxRecord<T> {
  id: string;
  seq: number;
  to: string;
  item: T;
  status: DeliveryStatus;
  attempts: number;
  created_at_ms: number;
  next_attempt_at_ms: number;
  last_error?: string;
  /** The network's ids of what was sent (a message with attachments may be several). */
  delivered_ids?: string[];
  settled_at_ms?: number;
}

/** The network refused for now (rate limit, 5xx, connection): try again later. */
export class RetryableDeliveryError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "RetryableDeliveryError";
  }
}

/** The network will never accept this one (unknown chat, blocked, bad content): fail it now. */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentDeliveryError";
  }
}

export interface OutboxOptions<T> {
  dir: string;
  /** Sends one message; resolves with the network's ids. Throws the errors above (others count as retryable). */
  deliver: (record: OutboxRecord<T>) => Promise<string[]>;
  /** Paces each recipient; a recipient without a token waits, it is not refused. */
  limiter?: RateLimiter;
  /** Attempts before a message is failed. Default 8. */
  maxAttempts?: number;
  /** First retry delay, doubled per attempt up to `maxBackoffMs`. Defaults 1 s and 5 min. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  log: (line: string) => void;
  now?: () => number;
}

const ROTATE_BYTES = 1024 * 1024;
const RECENT_KEPT = 1000;

type Waiter = { id: string; resolve: () => void };

export class Outbox<T> {
  private readonly pending = new Map<string, OutboxRecord<T>>();
  private readonly recent = new Map<string, OutboxRecord<T>>();
  private readonly busy = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();
  private waiters: Waiter[] = [];
  private seq = 0;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly pendingDir: string;
  private readonly logFile: string;
  private readonly now: () => number;

  constructor(private readonly options: OutboxOptions<T>) {
    this.pendingDir = join(options.dir, "pending");
    this.logFile = join(options.dir, "delivery.jsonl");
    this.now = options.now ?? Date.now;
    mkdirSync(this.pendingDir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(this.pendingDir)) {
      if (!/^\d+\.json$/.test(name)) continue;
      try {
        const record = JSON.parse(readFileSync(join(this.pendingDir, name), "utf8")) as OutboxRecord<T>;
        this.pending.set(record.id, { ...record, status: "queued" });
        this.seq = Math.max(this.seq, record.seq);
      } catch (error) {
        // A file that cannot be read is set aside, not retried forever nor silently lost.
        renameSync(join(this.pendingDir, name), join(this.pendingDir, `${name}.unreadable`));
        options.log(
          `outbox: ${name} is unreadable (${(error as Error).message}); kept as ${name}.unreadable`,
        );
      }
    }
    if (this.pending.size > 0)
      options.log(`outbox: ${this.pending.size} message(s) queued by an earlier run`);
  }

  /** Messages not settled yet, oldest first. */
  queued(): OutboxRecord<T>[] {
    return [...this.pending.values()].sort((a, b) => a.seq - b.seq);
  }

  /** A message's record: pending, or one of the last settled ones. */
  status(id: string): OutboxRecord<T> | undefined {
    return this.pending.get(id) ?? this.recent.get(id);
  }

  /** Writes the message to disk and queues it; returns its record (status `queued`). */
  enqueue(to: string, item: T, id: string = randomBytes(8).toString("hex")): OutboxRecord<T> {
    const now = this.now();
    const record: OutboxRecord<T> = {
      id,
      seq: ++this.seq,
      to,
      item,
      status: "queued",
      attempts: 0,
      created_at_ms: now,
      next_attempt_at_ms: now,
    };
    this.save(record);
    this.pending.set(id, record);
    this.pump();
    return record;
  }

  /** Resolves with the record once it is settled, or as it stands after `timeoutMs`. */
  async settled(id: string, timeoutMs: number): Promise<OutboxRecord<T> | undefined> {
    const current = this.status(id);
    if (current === undefined || current.status !== "queued") return current;
    await new Promise<void>((resolve) => {
      const waiter: Waiter = { id, resolve };
      this.waiters.push(waiter);
      setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      }, timeoutMs).unref();
    });
    return this.status(id);
  }

  /**
   * What `channel.send_outbound` answers for a message just enqueued: waits up to `waitMs` for it
   * to settle, throws the contract's recipient error — "`refusal.message`: <last error>", naming
   * `refusal.recipient` — when the network refused it, and otherwise answers
   * `{message_id, sent_at_unix}` — the id `sentId` gives for a sent message (default: the network's
   * first id, else the record's), or `outbox:<id>` for one still queued (the network unreachable,
   * rate limited, or the channel stopped: the queue has it on disk and sends it when it can).
   */
  async receipt(
    record: OutboxRecord<T>,
    waitMs: number,
    refusal: { message: string; recipient: string },
    sentId: (sent: OutboxRecord<T>) => string = (sent) => sent.delivered_ids?.[0] ?? sent.id,
  ): Promise<{ message_id: string; sent_at_unix: number }> {
    const settled = await this.settled(record.id, waitMs);
    const sentAt = Math.floor(Date.now() / 1000);
    if (settled?.status === "failed") {
      const lastError = settled.last_error;
      throw new ChannelRecipientError(`${refusal.message}: ${lastError}`, {
        recipient: refusal.recipient,
        reason: lastError ?? "failed",
      });
    }
    if (settled?.status === "sent") return { message_id: sentId(settled), sent_at_unix: sentAt };
    return { message_id: `outbox:${record.id}`, sent_at_unix: sentAt };
  }

  /**
   * A message the network accepted and later reported undeliverable (an email bounce arrives
   * minutes after the SMTP server took the message): its status becomes `failed` with the
   * reason, in memory when it is still among the recent ones, and in delivery.jsonl always — so
   * it works after a restart too. `bounced_after_sent` marks such a line.
   */
  markFailed(id: string, to: string, reason: string): void {
    const settled_at_ms = this.now();
    const record = this.recent.get(id);
    if (record !== undefined) Object.assign(record, { status: "failed", last_error: reason, settled_at_ms });
    this.appendLog({ id, to, status: "failed", last_error: reason, settled_at_ms, bounced_after_sent: true });
    this.options.log(`outbox: message ${id} to ${to} failed after it was sent: ${reason}`);
  }

  /** Starts (or resumes) sending. */
  start(): void {
    this.running = true;
    this.pump();
  }

  /** Stops sending: nothing new starts, sends in flight finish. The queue stays on disk. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inflight]);
  }

  private pump(): void {
    if (!this.running) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.now();
    let nextAt = Number.POSITIVE_INFINITY;
    const heads = new Set<string>();
    for (const record of this.queued()) {
      // One message at a time per recipient, in order: only each recipient's oldest is a candidate.
      if (heads.has(record.to)) continue;
      heads.add(record.to);
      if (this.busy.has(record.to)) continue;
      let readyAt = record.next_attempt_at_ms;
      if (readyAt <= now && this.options.limiter !== undefined) {
        const wait = this.options.limiter.take(record.to);
        if (wait > 0) readyAt = now + wait;
      }
      if (readyAt > now) {
        nextAt = Math.min(nextAt, readyAt);
        continue;
      }
      this.send(record);
    }
    if (nextAt !== Number.POSITIVE_INFINITY) {
      // Not unref'd: a queue waiting to retry is work pending; stop() clears it.
      this.timer = setTimeout(() => this.pump(), Math.max(1, nextAt - now));
    }
  }

  private send(record: OutboxRecord<T>): void {
    this.busy.add(record.to);
    record.attempts++;
    const attempt = this.options
      .deliver(record)
      .then(
        (ids) => this.settle(record, "sent", { delivered_ids: ids }),
        (error: unknown) => this.failed(record, error),
      )
      .catch((error: unknown) => this.options.log(`outbox: ${record.id}: ${(error as Error).message}`))
      .finally(() => {
        this.busy.delete(record.to);
        this.inflight.delete(attempt);
        this.pump();
      });
    this.inflight.add(attempt);
  }

  private failed(record: OutboxRecord<T>, error: unknown): void {
    const reason = (error as Error)?.message ?? String(error);
    const maxAttempts = this.options.maxAttempts ?? 8;
    if (error instanceof PermanentDeliveryError || record.attempts >= maxAttempts) {
      const why =
        error instanceof PermanentDeliveryError
          ? reason
          : `${reason} (gave up after ${record.attempts} attempts)`;
      this.settle(record, "failed", { last_error: why });
      return;
    }
    const base = this.options.baseBackoffMs ?? 1000;
    const backoff = Math.min(this.options.maxBackoffMs ?? 300_000, base * 2 ** (record.attempts - 1));
    const wait = Math.max(backoff, error instanceof RetryableDeliveryError ? (error.retryAfterMs ?? 0) : 0);
    record.last_error = reason;
    record.next_attempt_at_ms = this.now() + wait;
    this.save(record);
    this.options.log(
      `outbox: message ${record.id} to ${record.to} not sent (attempt ${record.attempts}): ${reason}; retrying in ${wait} ms`,
    );
  }

  private settle(record: OutboxRecord<T>, status: "sent" | "failed", fields: Partial<OutboxRecord<T>>): void {
    Object.assign(record, fields, { status, settled_at_ms: this.now() });
    this.pending.delete(record.id);
    this.recent.set(record.id, record);
    if (this.recent.size > RECENT_KEPT) this.recent.delete(this.recent.keys().next().value!);
    const { item: _item, ...line } = record;
    this.appendLog(line);
    rmSync(join(this.pendingDir, `${record.seq}.json`), { force: true });
    this.options.log(
      status === "sent"
        ? `outbox: message ${record.id} to ${record.to} sent (${record.delivered_ids?.join(", ")})`
        : `outbox: message ${record.id} to ${record.to} failed: ${record.last_error}`,
    );
    const ready = this.waiters.filter((w) => w.id === record.id);
    this.waiters = this.waiters.filter((w) => w.id !== record.id);
    for (const waiter of ready) waiter.resolve();
  }

  private save(record: OutboxRecord<T>): void {
    writeFileAtomic(join(this.pendingDir, `${record.seq}.json`), `${JSON.stringify(record)}\n`);
  }

  private appendLog(line: object): void {
    try {
      if ((statSync(this.logFile, { throwIfNoEntry: false })?.size ?? 0) > ROTATE_BYTES) {
        renameSync(this.logFile, `${this.logFile}.1`);
      }
      appendFileSync(this.logFile, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    } catch (error) {
      this.options.log(`outbox: cannot write ${this.logFile}: ${(error as Error).message}`);
    }
  }
}
