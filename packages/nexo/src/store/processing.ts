/**
 * Operator takeover, durably: which conversations an operator paused, and the inbound messages
 * held for them while paused. A scope is identified by a key string its owner builds (the daemon's
 * processing control); the scope itself is kept as JSON for the answers that echo it.
 *
 * Held messages are redacted before they are written, and the buffer of one scope is bounded: a
 * push beyond the cap evicts the oldest ones in the same transaction and says how many went.
 */
import type { Connection } from "./db.js";
import { redact } from "./redact.js";
import { requireId } from "./validate.js";

export interface PauseRecord {
  scopeKey: string;
  agentId: string;
  /** The scope as given to pause (JSON value). */
  scope: unknown;
  pausedAtMs: number;
  operatorTokenHash: string;
  reason: string | undefined;
}

export interface PendingInbound {
  id: number;
  /** Already redacted. */
  body: string;
  senderId: string | undefined;
  messageId: string | undefined;
  /** The channel it came through (`<kind>` or `<kind>.<instance>`). */
  sourcePlugin: string;
  receivedAtMs: number;
}

export type NewPendingInbound = Omit<PendingInbound, "id">;

interface PauseRow {
  scope_key: string;
  agent_id: string;
  scope: string;
  paused_at_ms: number;
  operator_token_hash: string;
  reason: string | null;
}

interface PendingRow {
  id: number;
  body: string;
  sender_id: string | null;
  message_id: string | null;
  source_plugin: string;
  received_at_ms: number;
}

const toPause = (row: PauseRow): PauseRecord => ({
  scopeKey: row.scope_key,
  agentId: row.agent_id,
  scope: JSON.parse(row.scope) as unknown,
  pausedAtMs: row.paused_at_ms,
  operatorTokenHash: row.operator_token_hash,
  reason: row.reason ?? undefined,
});

const toPending = (row: PendingRow): PendingInbound => ({
  id: row.id,
  body: row.body,
  senderId: row.sender_id ?? undefined,
  messageId: row.message_id ?? undefined,
  sourcePlugin: row.source_plugin,
  receivedAtMs: row.received_at_ms,
});

export class ProcessingRepository {
  readonly #db: Connection;

  constructor(db: Connection) {
    this.#db = db;
  }

  /** The pause of this scope, or undefined when the agent is active on it. */
  pause(scopeKey: string): PauseRecord | undefined {
    const row = this.#db
      .prepare("SELECT * FROM processing_pauses WHERE scope_key = ?")
      .get(requireId("scopeKey", scopeKey)) as PauseRow | undefined;
    return row === undefined ? undefined : toPause(row);
  }

  /** Every paused scope, oldest pause first. */
  pauses(): PauseRecord[] {
    return (
      this.#db.prepare("SELECT * FROM processing_pauses ORDER BY paused_at_ms, scope_key").all() as PauseRow[]
    ).map(toPause);
  }

  /** Records a pause; false (and nothing written) when the scope is already paused. */
  insertPause(record: PauseRecord): boolean {
    const result = this.#db
      .prepare(
        `INSERT INTO processing_pauses (scope_key, agent_id, scope, paused_at_ms, operator_token_hash, reason)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope_key) DO NOTHING`,
      )
      .run(
        requireId("scopeKey", record.scopeKey),
        requireId("agentId", record.agentId),
        JSON.stringify(record.scope),
        record.pausedAtMs,
        record.operatorTokenHash,
        record.reason ?? null,
      );
    return result.changes === 1;
  }

  /**
   * Ends the pause and hands back what was held for it, oldest first, in one transaction (a message
   * pushed concurrently is either among them or finds the scope active). undefined when the scope
   * was not paused.
   */
  endPause(scopeKey: string): { pause: PauseRecord; pending: PendingInbound[] } | undefined {
    requireId("scopeKey", scopeKey);
    return this.#db
      .transaction(() => {
        const pause = this.pause(scopeKey);
        if (pause === undefined) return undefined;
        const pending = this.pending(scopeKey);
        this.#db.prepare("DELETE FROM processing_pending WHERE scope_key = ?").run(scopeKey);
        this.#db.prepare("DELETE FROM processing_pauses WHERE scope_key = ?").run(scopeKey);
        return { pause, pending };
      })
      .immediate();
  }

  /** What is held for the scope, oldest first. */
  pending(scopeKey: string): PendingInbound[] {
    return (
      this.#db
        .prepare(
          "SELECT id, body, sender_id, message_id, source_plugin, received_at_ms FROM processing_pending WHERE scope_key = ? ORDER BY id",
        )
        .all(requireId("scopeKey", scopeKey)) as PendingRow[]
    ).map(toPending);
  }

  /**
   * Holds one inbound for a paused scope, redacted, keeping at most `cap` (the oldest go first).
   * Returns `held: false` when the scope is not paused (nothing written) and, when held, how many
   * older messages were evicted to make room. A cap of 0 holds nothing: the message itself is the
   * one dropped.
   */
  hold(scopeKey: string, inbound: NewPendingInbound, cap: number): { held: boolean; dropped: number } {
    requireId("scopeKey", scopeKey);
    return this.#db
      .transaction(() => {
        if (this.pause(scopeKey) === undefined) return { held: false, dropped: 0 };
        if (cap <= 0) return { held: true, dropped: 1 };
        this.#db
          .prepare(
            `INSERT INTO processing_pending (scope_key, body, sender_id, message_id, source_plugin, received_at_ms)
             VALUES (?, ?, ?, ?, ?, ?)`,
          )
          .run(
            scopeKey,
            redact(inbound.body).text,
            inbound.senderId ?? null,
            inbound.messageId ?? null,
            inbound.sourcePlugin,
            inbound.receivedAtMs,
          );
        const dropped = this.#db
          .prepare(
            `DELETE FROM processing_pending WHERE scope_key = @key AND id NOT IN
               (SELECT id FROM processing_pending WHERE scope_key = @key ORDER BY id DESC LIMIT @cap)`,
          )
          .run({ key: scopeKey, cap }).changes;
        return { held: true, dropped };
      })
      .immediate();
  }
}
