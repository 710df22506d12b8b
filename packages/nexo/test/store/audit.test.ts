/**
 * The microapp admin audit log on a real SQLite file: rows survive a reopen, the tail filters,
 * pages newest first with the total, and retention deletes by age and by count.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type AuditRow, isStoreError, Store } from "../../src/store/index.js";

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "nexo-store-audit-"));
});
after(() => rmSync(root, { recursive: true, force: true }));

const row = (overrides: Partial<AuditRow>): AuditRow => ({
  microapp_id: "probe",
  method: "nexo/admin/microapp_audit/tail",
  capability: "audit_read",
  args_hash: "0".repeat(64),
  started_at_ms: 1_700_000_000_000,
  result: "ok",
  error_code: null,
  duration_ms: 3,
  tenant_id: null,
  ...overrides,
});

describe("audit log", () => {
  it("keeps rows across a reopen and tails them newest first with filters and paging", () => {
    const path = join(root, "tail.db");
    let store = Store.open(path);
    store.audit.append(row({ started_at_ms: 1000 }));
    store.audit.append(
      row({
        started_at_ms: 2000,
        result: "denied",
        error_code: -32004,
        capability: "secrets_write",
        method: "nexo/admin/secrets/write",
      }),
    );
    store.audit.append(row({ started_at_ms: 3000, microapp_id: "other", tenant_id: "acme" }));
    store.audit.append(
      row({
        started_at_ms: 4000,
        result: "error",
        error_code: -32601,
        capability: "(unknown_method)",
        method: "nexo/admin/nope",
      }),
    );
    store.close();
    store = Store.open(path);
    try {
      const all = store.audit.tail({ limit: 10 });
      assert.equal(all.total, 4);
      assert.deepEqual(
        all.entries.map((e) => e.started_at_ms),
        [4000, 3000, 2000, 1000],
      );
      assert.deepEqual(
        all.entries[2],
        row({
          started_at_ms: 2000,
          result: "denied",
          error_code: -32004,
          capability: "secrets_write",
          method: "nexo/admin/secrets/write",
        }),
      );

      assert.deepEqual(
        store.audit.tail({ limit: 10, result: "denied" }).entries.map((e) => e.method),
        ["nexo/admin/secrets/write"],
      );
      assert.deepEqual(
        store.audit.tail({ limit: 10, microappId: "other" }).entries.map((e) => e.tenant_id),
        ["acme"],
      );
      assert.equal(store.audit.tail({ limit: 10, tenantId: "acme" }).total, 1);
      assert.equal(
        store.audit.tail({ limit: 10, method: "nexo/admin/nope" }).entries[0]?.capability,
        "(unknown_method)",
      );
      assert.deepEqual(
        store.audit.tail({ limit: 10, sinceMs: 2500 }).entries.map((e) => e.started_at_ms),
        [4000, 3000],
      );

      const page = store.audit.tail({ limit: 2, offset: 2 });
      assert.equal(page.total, 4);
      assert.deepEqual(
        page.entries.map((e) => e.started_at_ms),
        [2000, 1000],
      );
    } finally {
      store.close();
    }
  });

  it("refuses a limit outside 1..500 and a negative offset", () => {
    const store = Store.inMemory();
    try {
      assert.throws(
        () => store.audit.tail({ limit: 0 }),
        (e: unknown) => isStoreError(e, "invalid_argument"),
      );
      assert.throws(
        () => store.audit.tail({ limit: 501 }),
        (e: unknown) => isStoreError(e, "invalid_argument"),
      );
      assert.throws(
        () => store.audit.tail({ limit: 5, offset: -1 }),
        (e: unknown) => isStoreError(e, "invalid_argument"),
      );
    } finally {
      store.close();
    }
  });

  it("retention deletes rows older than the days, then the oldest beyond the row cap", () => {
    const store = Store.open(join(root, "sweep.db"));
    try {
      const day = 86_400_000;
      const now = 100 * day;
      for (const age of [40, 31, 29, 3, 2, 1]) store.audit.append(row({ started_at_ms: now - age * day }));
      assert.equal(store.audit.sweep({ retentionDays: 30, maxRows: 1000, nowMs: now }), 2);
      assert.equal(store.audit.count(), 4);
      assert.equal(store.audit.sweep({ retentionDays: 30, maxRows: 2, nowMs: now }), 2);
      assert.deepEqual(
        store.audit.tail({ limit: 10 }).entries.map((e) => (now - e.started_at_ms) / day),
        [1, 2],
      );
      assert.equal(store.audit.sweep({ retentionDays: 30, maxRows: 2, nowMs: now }), 0);
      assert.throws(
        () => store.audit.sweep({ retentionDays: 0, maxRows: 2 }),
        (e: unknown) => isStoreError(e, "invalid_argument"),
      );
    } finally {
      store.close();
    }
  });
});
