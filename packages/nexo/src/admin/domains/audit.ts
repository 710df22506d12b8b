/**
 * `nexo/admin/microapp_audit/tail` (audit_read): the audit log, newest first, filtered, paged.
 * The log is the operator's: a microapp granted audit_read sees every microapp's rows (filter by
 * `microapp_id` for one).
 */
import { MAX_AUDIT_TAIL_LIMIT } from "../../store/index.js";
import { defineAdminDomain } from "../domain.js";

/** `limit` absent or 0 means this many; anything else is clamped to 1 … 500. */
export const DEFAULT_AUDIT_TAIL_LIMIT = 50;

export const auditDomain = defineAdminDomain({
  domain: "audit",
  handlers: ({ audit }) => ({
    "nexo/admin/microapp_audit/tail": (params) => {
      const filter = params ?? {};
      const limit = Math.min(MAX_AUDIT_TAIL_LIMIT, filter.limit || DEFAULT_AUDIT_TAIL_LIMIT);
      const offset = filter.offset ?? 0;
      const { entries, total } = audit.tail({
        limit,
        offset,
        ...(filter.microapp_id === undefined ? {} : { microappId: filter.microapp_id }),
        ...(filter.method === undefined ? {} : { method: filter.method }),
        ...(filter.result === undefined ? {} : { result: filter.result }),
        ...(filter.tenant_id === undefined ? {} : { tenantId: filter.tenant_id }),
        ...(filter.since_ms === undefined ? {} : { sinceMs: filter.since_ms }),
      });
      const hasMore = offset + entries.length < total;
      return {
        entries,
        total,
        has_more: hasMore,
        ...(hasMore ? { next_offset: offset + entries.length } : {}),
      };
    },
  }),
});
