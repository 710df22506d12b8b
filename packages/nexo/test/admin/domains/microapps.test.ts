/**
 * `nexo/admin/microapps/list` (a nexo addition, plugin_doctor) over real fixture microapps on the
 * microapp host: granted, it reports every microapp — running ones with their pid, a refused one
 * with why — with what each declares and was granted, and the call is audited; denied without the
 * grant, audited as denied.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { admin } from "@nexo/wire/schemas";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

describe("admin microapps/list", () => {
  let rig: AdminRig;
  before(async () => {
    rig = await adminRig(
      [
        { id: "ops", fixture: "probe", grants: ["audit_read", "plugin_doctor", "memory_query"] },
        { id: "viewer", fixture: "probe", grants: ["audit_read"] },
        // The probe requires audit_read: without it the host refuses to spawn it.
        { id: "locked", fixture: "probe", grants: [] },
      ],
      { services: () => ({ microapps: { status: () => rig.manager.status() } }) },
    );
  });
  after(async () => {
    await rig?.stop();
    await cleanupMicroapps();
  });

  it("granted: every microapp with its state, pid, restarts, last error and capabilities; audited ok", async () => {
    const reply = await rig.call("ops", "nexo/admin/microapps/list", {});
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const result = reply.result as admin.MicroappsListResult;
    assert.ok(Math.abs(result.generated_at_ms - Date.now()) < 60_000);
    const byId = new Map(result.microapps.map((m) => [m.id, m]));
    assert.deepEqual([...byId.keys()].sort(), ["locked", "ops", "viewer"]);

    const ops = byId.get("ops")!;
    assert.equal(ops.state, "running");
    assert.equal(ops.pid, rig.manager.host("ops")?.status().pid);
    assert.equal(ops.restarts, 0);
    assert.equal(ops.version, "0.1.0");
    assert.deepEqual(ops.capabilities.granted.sort(), ["audit_read", "memory_query", "plugin_doctor"]);
    assert.deepEqual(ops.capabilities.declared.required, ["audit_read"]);
    assert.ok(ops.capabilities.declared.optional.includes("memory_query"));
    assert.ok(
      ops.warnings.some((w) => w.includes("plugin_doctor") && w.includes("does not declare")),
      "an undeclared grant is reported",
    );
    assert.equal(ops.last_error, undefined);

    const locked = byId.get("locked")!;
    assert.equal(locked.state, "refused");
    assert.equal(locked.pid, undefined);
    assert.deepEqual(locked.capabilities.granted, []);
    assert.match(locked.last_error?.message ?? "", /audit_read/);
    assert.ok((locked.last_error?.at_ms ?? 0) > 0);

    const row = rig.store.audit.tail({ microappId: "ops", limit: 1 }).entries[0];
    assert.equal(row?.method, "nexo/admin/microapps/list");
    assert.equal(row?.result, "ok");
  });

  it("denied without plugin_doctor (-32004), audited as denied", async () => {
    const reply = await rig.call("viewer", "nexo/admin/microapps/list", {});
    assert.equal(reply.error?.code, -32004, JSON.stringify(reply));
    assert.deepEqual(reply.error?.data, {
      capability: "plugin_doctor",
      microapp_id: "viewer",
      method: "nexo/admin/microapps/list",
    });
    const row = rig.store.audit.tail({ microappId: "viewer", limit: 1 }).entries[0];
    assert.equal(row?.method, "nexo/admin/microapps/list");
    assert.equal(row?.result, "denied");
  });
});
