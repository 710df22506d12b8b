/**
 * Escalations: work an agent flagged for a human. One row per escalation; at most one is pending
 * per scope (a unique partial index), resolved ones stay as history. The scope, the resolution and
 * the free-form context are JSON; the summary is redacted before it is written.
 */
import type { Connection } from "./db.js";
import { redact, redactJson } from "./redact.js";
import { requireId } from "./validate.js";

export interface EscalationRecord {
  id: number;
  scopeKey: string;
  agentId: string;
  tenantId: string | undefined;
  scope: unknown;
  summary: string;
  reason: string;
  urgency: string;
  context: Record<string, unknown> | undefined;
  requestedAtMs: number;
  resolvedAtMs: number | undefined;
  /** How it was settled (JSON value), when it was. */
  resolvedBy: unknown;
}

export type NewEscalation = Omit<EscalationRecord, "id" | "resolvedAtMs" | "resolvedBy">;

export interface EscalationFilter {
  state: "pending" | "resolved" | "all";
  agentId?: string;
  /** Only escalations of this tenant's agents. */
  tenantId?: string;
  limit: number;
}

interface Row {
  id: number;
  scope_key: string;
  agent_id: string;
  tenant_id: string | null;
  scope: string;
  summary: string;
  reason: string;
  urgency: string;
  context: string | null;
  requested_at_ms: number;
  resolved_at_ms: number | null;
  resolved_by: string | null;
}

const toRecord = (row: Row): EscalationRecord => ({
  id: row.id,
  scopeKey: row.scope_key,
  agentId: row.agent_id,
  tenantId: row.tenant_id ?? undefined,
  scope: JSON.parse(row.scope) as unknown,
  summary: row.summary,
  reason: row.reason,
  urgency: row.urgency,
  context: row.context === null ? undefined : (JSON.parse(row.context) as Record<string, unknown>),
  requestedAtMs: row.requested_at_ms,
  resolvedAtMs: row.resolved_at_ms ?? undefined,
  resolvedBy: row.resolved_by === null ? undefined : (JSON.parse(row.resolved_by) as unknown),
});

export class EscalationRepository {
  readonly #db: Connection;

  constructor(db: Connection) {
    this.#db = db;
  }

  /** The pending escalation of a scope, if any. */
  pending(scopeKey: string): EscalationRecord | undefined {
    const row = this.#db
      .prepare("SELECT * FROM escalations WHERE scope_key = ? AND resolved_at_ms IS NULL")
      .get(requireId("scopeKey", scopeKey)) as Row | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Records a pending escalation. When one is already pending on the scope, nothing is written and
   * that one is returned with `created: false`.
   */
  request(escalation: NewEscalation): { record: EscalationRecord; created: boolean } {
    return this.#db
      .transaction(() => {
        const existing = this.pending(escalation.scopeKey);
        if (existing !== undefined) return { record: existing, created: false };
        const row = this.#db
          .prepare(
            `INSERT INTO escalations (scope_key, agent_id, tenant_id, scope, summary, reason, urgency, context, requested_at_ms)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          )
          .get(
            requireId("scopeKey", escalation.scopeKey),
            requireId("agentId", escalation.agentId),
            escalation.tenantId ?? null,
            JSON.stringify(escalation.scope),
            redact(escalation.summary).text,
            escalation.reason,
            escalation.urgency,
            escalation.context === undefined ? null : JSON.stringify(redactJson(escalation.context).value),
            escalation.requestedAtMs,
          ) as Row;
        return { record: toRecord(row), created: true };
      })
      .immediate();
  }

  /** Settles the scope's pending escalation; undefined when none was pending. */
  resolve(scopeKey: string, by: unknown, atMs: number): EscalationRecord | undefined {
    const row = this.#db
      .prepare(
        `UPDATE escalations SET resolved_at_ms = ?, resolved_by = ?
         WHERE scope_key = ? AND resolved_at_ms IS NULL RETURNING *`,
      )
      .get(atMs, JSON.stringify(by), requireId("scopeKey", scopeKey)) as Row | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  /** Newest first: by request time for pending ones, by resolution time for resolved ones. */
  list(filter: EscalationFilter): EscalationRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.state === "pending") where.push("resolved_at_ms IS NULL");
    if (filter.state === "resolved") where.push("resolved_at_ms IS NOT NULL");
    if (filter.agentId !== undefined) {
      where.push("agent_id = ?");
      params.push(filter.agentId);
    }
    if (filter.tenantId !== undefined) {
      where.push("tenant_id = ?");
      params.push(filter.tenantId);
    }
    const sql = `SELECT * FROM escalations ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY COALESCE(resolved_at_ms, requested_at_ms) DESC, id DESC LIMIT ?`;
    return (this.#db.prepare(sql).all(...params, filter.limit) as Row[]).map(toRecord);
  }
}
