/** `nexo/admin/microapp_audit/tail` from a real microapp over a real audit log. */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const TAIL = "nexo/admin/microapp_audit/tail";

interface TailResult {
  entries: Array<{ microapp_id: string; started_at_ms: number; tenant_id?: string | null; result: string }>;
  total: number;
  has_more: boolean;
  next_offset?: number;
}

describe("microapp_audit/tail", () => {
  it("pages newest first with total, has_more and next_offset; filters; limit 0 means 50, clamped to 500", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read"] }]);
    const base = { capability: "x", args_hash: "h", result: "ok" as const, error_code: null, duration_ms: 1 };
    for (let i = 1; i <= 60; i++) {
      rig.store.audit.append({
        ...base,
        microapp_id: i % 2 === 0 ? "even" : "odd",
        method: "nexo/admin/agents/list",
        started_at_ms: i,
        tenant_id: i === 7 ? "acme" : null,
      });
    }
    const first = (await rig.call("probe", TAIL, { limit: 0 })).result as TailResult;
    assert.equal(first.entries.length, 50);
    assert.equal(first.total, 60);
    assert.equal(first.has_more, true);
    assert.equal(first.next_offset, 50);
    assert.equal(first.entries[0]?.started_at_ms, 60);
    const last = (await rig.call("probe", TAIL, { offset: first.next_offset })).result as TailResult;
    // The first tail call itself is now the newest row: 61 rows in all.
    assert.equal(last.total, 61);
    assert.equal(last.entries.length, 11);
    assert.equal(last.has_more, false);
    assert.equal(last.next_offset, undefined);

    const odd = (await rig.call("probe", TAIL, { microapp_id: "odd", limit: 1000 })).result as TailResult;
    assert.equal(odd.total, 30);
    assert.ok(odd.entries.every((e) => e.microapp_id === "odd"));
    const tenant = (await rig.call("probe", TAIL, { tenant_id: "acme" })).result as TailResult;
    assert.deepEqual(
      tenant.entries.map((e) => e.started_at_ms),
      [7],
    );
    const since = (await rig.call("probe", TAIL, { since_ms: 59, microapp_id: "even" })).result as TailResult;
    assert.deepEqual(
      since.entries.map((e) => e.started_at_ms),
      [60],
    );
  });
});
