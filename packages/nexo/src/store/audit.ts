/**
 * The microapp admin audit log: one row per admin call a microapp made, whatever its outcome
 * (ok, error, denied — unknown methods included). Rows hold ids, the capability, a hash of the
 * redacted params, the outcome and timings, never the params themselves, so the log can be kept
 * and shown without holding personal data. Retention is by age and by row count (`sweep`).
 */
import type { admin } from "@nexo/wire/schemas";
import type { Connection } from "./db.js";
import { StoreError } from "./errors.js";

export type AuditRow = admin.AdminAuditRow;

export interface AuditTailFilter {
  microappId?: string;
  method?: string;
  result?: admin.AdminAuditResult;
  tenantId?: string;
  /** Rows started at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** 1 … MAX_AUDIT_TAIL_LIMIT. */
  limit: number;
  offset?: number;
}

export interface AuditTail {
  /** Newest first. */
  entries: AuditRow[];
  /** Rows matching the filter, all pages together. */
  total: number;
}

export interface AuditRetention {
  /** Rows started more than this many days ago are deleted. */
  retentionDays: number;
  /** Beyond this many rows, the oldest are deleted. */
  maxRows: number;
  /** "Now" in ms since the epoch; default Date.now(). */
  nowMs?: number;
}

export const MAX_AUDIT_TAIL_LIMIT = 500;

const DAY_MS = 86_400_000;

interface Row {
  microapp_id: string;
  method: string;
  capability: string;
  args_hash: string;
  started_at_ms: number;
  result: admin.AdminAuditResult;
  error_code: number | null;
  duration_ms: number;
  tenant_id: string | null;
}

const COLUMNS =
  "microapp_id, method, capability, args_hash, started_at_ms, result, error_code, duration_ms, tenant_id";

export class AuditRepository {
  readonly #db: Connection;
  readonly #insert: ReturnType<Connection["prepare"]>;

  constructor(db: Connection) {
    this.#db = db;
    this.#insert = db.prepare(
      `INSERT INTO microapp_admin_audit (${COLUMNS}) VALUES (@microapp_id, @method, @capability, @args_hash, @started_at_ms, @result, @error_code, @duration_ms, @tenant_id)`,
    );
  }

  append(row: AuditRow): void {
    this.#insert.run({ ...row, error_code: row.error_code ?? null, tenant_id: row.tenant_id ?? null });
  }

  /** Newest first, `limit` rows from `offset`, with the total that matched. */
  tail(filter: AuditTailFilter): AuditTail {
    const { limit, offset = 0 } = filter;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_TAIL_LIMIT)
      throw new StoreError(
        "invalid_argument",
        `limit must be an integer from 1 to ${MAX_AUDIT_TAIL_LIMIT}, got ${limit}`,
      );
    if (!Number.isInteger(offset) || offset < 0)
      throw new StoreError("invalid_argument", `offset must be a non-negative integer, got ${offset}`);
    const where: string[] = [];
    const args: Record<string, unknown> = {};
    const add = (clause: string, key: string, value: unknown) => {
      if (value === undefined) return;
      where.push(clause);
      args[key] = value;
    };
    add("microapp_id = @microappId", "microappId", filter.microappId);
    add("method = @method", "method", filter.method);
    add("result = @result", "result", filter.result);
    add("tenant_id = @tenantId", "tenantId", filter.tenantId);
    add("started_at_ms >= @sinceMs", "sinceMs", filter.sinceMs);
    const clause = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    const total = (
      this.#db.prepare(`SELECT count(*) AS n FROM microapp_admin_audit ${clause}`).get(args) as { n: number }
    ).n;
    const rows = this.#db
      .prepare(
        `SELECT ${COLUMNS} FROM microapp_admin_audit ${clause} ORDER BY started_at_ms DESC, id DESC LIMIT @limit OFFSET @offset`,
      )
      .all({ ...args, limit, offset }) as Row[];
    return { entries: rows.map(toAuditRow), total };
  }

  /** How many rows the log holds. */
  count(): number {
    return (this.#db.prepare("SELECT count(*) AS n FROM microapp_admin_audit").get() as { n: number }).n;
  }

  /** Deletes rows older than the retention and, beyond `maxRows`, the oldest. Returns how many. */
  sweep(retention: AuditRetention): number {
    const { retentionDays, maxRows } = retention;
    if (!(retentionDays > 0))
      throw new StoreError("invalid_argument", `retentionDays must be positive, got ${retentionDays}`);
    if (!Number.isInteger(maxRows) || maxRows < 1)
      throw new StoreError("invalid_argument", `maxRows must be a positive integer, got ${maxRows}`);
    const cutoff = (retention.nowMs ?? Date.now()) - retentionDays * DAY_MS;
    return this.#db
      .transaction(() => {
        const old = this.#db
          .prepare("DELETE FROM microapp_admin_audit WHERE started_at_ms < ?")
          .run(cutoff).changes;
        const excess = this.#db
          .prepare(
            `DELETE FROM microapp_admin_audit WHERE id IN (
               SELECT id FROM microapp_admin_audit ORDER BY started_at_ms DESC, id DESC LIMIT -1 OFFSET ?
             )`,
          )
          .run(maxRows).changes;
        return old + excess;
      })
      .immediate();
  }
}

function toAuditRow(row: Row): AuditRow {
  return {
    microapp_id: row.microapp_id,
    method: row.method,
    capability: row.capability,
    args_hash: row.args_hash,
    started_at_ms: row.started_at_ms,
    result: row.result,
    error_code: row.error_code,
    duration_ms: row.duration_ms,
    tenant_id: row.tenant_id,
  };
}
