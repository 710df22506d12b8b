/**
 * `nexo/admin/microapps/list` (a nexo addition, plugin_doctor) over real fixture microapps on the
 * microapp host: granted, it reports every microapp — running ones with their pid, a refused one
 * with why — with what each declares and was granted, and the call is audited; denied without the
 * grant, audited as denied.
 *
 * `nexo/admin/microapps/restart` (a nexo addition, plugin_restart): another microapp is stopped and
 * a new process answers; the caller restarting itself gets its answer first (deferred) and is then
 * replaced; an unknown id is -32602, a missing grant -32004, each audited.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { admin } from "@nexo/wire/schemas";
import { type AdminRig, adminRig } from "../../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../../fixtures/microapps/harness.js";

describe("admin microapps/list and microapps/restart", () => {
  let rig: AdminRig;
  before(async () => {
    rig = await adminRig(
      [
        {
          id: "ops",
          fixture: "probe",
          grants: ["audit_read", "plugin_doctor", "plugin_restart", "memory_query"],
        },
        { id: "viewer", fixture: "probe", grants: ["audit_read"] },
        // The probe requires audit_read: without it the host refuses to spawn it.
        { id: "locked", fixture: "probe", grants: [] },
      ],
      {
        services: () => ({
          microapps: { status: () => rig.manager.status(), restart: (id) => rig.manager.restart(id) },
        }),
      },
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
    assert.deepEqual(ops.capabilities.granted.sort(), [
      "audit_read",
      "memory_query",
      "plugin_doctor",
      "plugin_restart",
    ]);
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

  it("restart: another microapp's process is replaced by a new one that answers; audited ok", async () => {
    const before = rig.manager.host("viewer")!.status().pid!;
    const reply = await rig.call("ops", "nexo/admin/microapps/restart", { microapp_id: "viewer" });
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const result = reply.result as admin.MicroappsRestartResult;
    assert.equal(result.microapp_id, "viewer");
    assert.equal(result.deferred, false);
    assert.equal(result.state, "running");
    assert.equal(result.previous_pid, before);
    assert.ok(result.new_pid !== undefined && result.new_pid !== before, JSON.stringify(result));
    assert.equal(rig.manager.host("viewer")!.status().pid, result.new_pid);
    assert.equal(rig.manager.host("viewer")!.status().restarts, 1, "counted as a restart");
    assert.throws(() => process.kill(before, 0), "the old process is gone");
    // The new process is served by the frame like the old one.
    const tail = await rig.call("viewer", "nexo/admin/microapp_audit/tail", { limit: 1 });
    assert.equal(tail.error, undefined, JSON.stringify(tail.error));
    const row = rig.store.audit.tail({ microappId: "ops", limit: 1 }).entries[0];
    assert.equal(row?.method, "nexo/admin/microapps/restart");
    assert.equal(row?.capability, "plugin_restart");
    assert.equal(row?.result, "ok");
  });

  it("restart: a refused microapp is refused again, with why", async () => {
    const reply = await rig.call("ops", "nexo/admin/microapps/restart", { microapp_id: "locked" });
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const result = reply.result as admin.MicroappsRestartResult;
    assert.equal(result.state, "refused");
    assert.equal(result.new_pid, undefined);
    assert.equal(result.error?.code, "microapp_refused");
    assert.match(result.error?.message ?? "", /audit_read/);
  });

  it("restart: an unknown id is -32602; without plugin_restart -32004; both audited", async () => {
    const unknown = await rig.call("ops", "nexo/admin/microapps/restart", { microapp_id: "nothere" });
    assert.equal(unknown.error?.code, -32602, JSON.stringify(unknown));
    assert.match(unknown.error?.message ?? "", /no microapp "nothere"/);
    assert.equal(rig.store.audit.tail({ microappId: "ops", limit: 1 }).entries[0]?.result, "error");

    const denied = await rig.call("viewer", "nexo/admin/microapps/restart", { microapp_id: "ops" });
    assert.equal(denied.error?.code, -32004, JSON.stringify(denied));
    assert.deepEqual(denied.error?.data, {
      capability: "plugin_restart",
      microapp_id: "viewer",
      method: "nexo/admin/microapps/restart",
    });
    assert.equal(rig.store.audit.tail({ microappId: "viewer", limit: 1 }).entries[0]?.result, "denied");
  });

  it("restart of the caller itself: answered first (deferred), then its process is replaced", async () => {
    const before = rig.manager.host("ops")!.status().pid!;
    const reply = await rig.call("ops", "nexo/admin/microapps/restart", { microapp_id: "ops" });
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    const result = reply.result as admin.MicroappsRestartResult;
    assert.deepEqual(
      { ...result, restarted_at_ms: 0 },
      { microapp_id: "ops", previous_pid: before, restarted_at_ms: 0, deferred: true, state: "restarting" },
    );
    // The restart runs after the answer: wait for the new process (bounded by the test's timeout).
    const deadline = Date.now() + 60_000;
    let now = rig.manager.host("ops")?.status();
    while (!(now?.state === "running" && now.pid !== before) && Date.now() < deadline) {
      await sleep(25);
      now = rig.manager.host("ops")?.status();
    }
    assert.equal(now?.state, "running", JSON.stringify(now));
    assert.notEqual(now?.pid, before);
    assert.throws(() => process.kill(before, 0), "the old process is gone");
    const row = rig.store.audit
      .tail({ microappId: "ops", limit: 10 })
      .entries.find((entry) => entry.method === "nexo/admin/microapps/restart");
    assert.equal(row?.result, "ok", "the self-restart is audited as served");
    const again = await rig.call("ops", "nexo/admin/microapps/list", {});
    assert.equal(again.error, undefined, "the new process calls the admin RPC");
  });
});
