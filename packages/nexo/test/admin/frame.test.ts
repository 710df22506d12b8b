/**
 * The admin RPC frame with real microapp processes and a real SQLite audit log: every gate outcome
 * (granted, denied, switched off, not served, unknown method, invalid params, a non-`app:` id, a
 * notification) answered as documented and audited, with nothing executed when refused.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import { AdminEnvError, AdminFrame, argsHash, UNKNOWN_METHOD_CAPABILITY } from "../../src/admin/index.js";
import { Store } from "../../src/store/index.js";
import { type AdminRig, adminRig } from "../fixtures/microapps/admin-harness.js";
import { cleanupMicroapps } from "../fixtures/microapps/harness.js";

let rig: AdminRig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
  await cleanupMicroapps();
});

const TAIL = "nexo/admin/microapp_audit/tail";

function rows(r: AdminRig) {
  return r.store.audit.tail({ limit: 100 }).entries;
}

describe("admin frame: the gate", () => {
  it("a granted call is served and audited ok", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read"] }]);
    const reply = await rig.call("probe", TAIL, { limit: 5 });
    assert.deepEqual(reply.result, { entries: [], total: 0, has_more: false });
    const [row] = rows(rig);
    assert.equal(row?.microapp_id, "probe");
    assert.equal(row?.method, TAIL);
    assert.equal(row?.capability, "audit_read");
    assert.equal(row?.result, "ok");
    assert.equal(row?.error_code, null);
    assert.equal(row?.args_hash, argsHash(TAIL, { limit: 5 }));
    assert.ok(typeof row?.duration_ms === "number" && row.duration_ms >= 0);
  });

  it("a call without its capability is refused -32004 with {capability, microapp_id, method}, never run, and audited denied", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read"] }], {
      services: (_store, stateDir) => ({ secrets: { stateDir, env: {} } }),
    });
    const reply = await rig.call("probe", "nexo/admin/secrets/write", {
      name: "API_TOKEN",
      value: "s3cret-value",
    });
    assert.deepEqual(reply.error, {
      code: -32004,
      message: "capability_not_granted",
      data: { capability: "secrets_write", microapp_id: "probe", method: "nexo/admin/secrets/write" },
    });
    assert.equal(existsSync(join(rig.stateDir, "secrets", "API_TOKEN.txt")), false);
    const [row] = rows(rig);
    assert.deepEqual(
      { result: row?.result, code: row?.error_code, capability: row?.capability },
      { result: "denied", code: -32004, capability: "secrets_write" },
    );
  });

  it("an unknown method is -32601 and audited with the capability (unknown_method)", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read"] }]);
    const reply = await rig.call("probe", "nexo/admin/agents/fly", {});
    assert.equal(reply.error?.code, -32601);
    assert.match(reply.error?.message ?? "", /method not found: nexo\/admin\/agents\/fly/);
    const [row] = rows(rig);
    assert.deepEqual(
      { method: row?.method, capability: row?.capability, result: row?.result, code: row?.error_code },
      {
        method: "nexo/admin/agents/fly",
        capability: UNKNOWN_METHOD_CAPABILITY,
        result: "error",
        code: -32601,
      },
    );
  });

  it("invalid params are -32602 before the handler, audited as an error", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read"] }]);
    const reply = await rig.call("probe", TAIL, { limit: "ten" });
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error?.message ?? "", /limit/);
    assert.deepEqual([rows(rig)[0]?.result, rows(rig)[0]?.error_code], ["error", -32602]);
  });

  it("a method of the table no domain serves is -32601 when granted, -32004 when not", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "agents_crud"] }]);
    const granted = await rig.call("probe", "nexo/admin/agents/list", {});
    assert.equal(granted.error?.code, -32601);
    assert.match(granted.error?.message ?? "", /agents domain is not available/);
    const denied = await rig.call("probe", "nexo/admin/skills/list", {});
    assert.equal(denied.error?.code, -32004);
    assert.deepEqual(
      rows(rig).map((row) => [row.method, row.result]),
      [
        ["nexo/admin/skills/list", "denied"],
        ["nexo/admin/agents/list", "error"],
      ],
    );
  });

  it("a kill switch answers -32601 even when granted, naming the variable", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "agents_crud"] }], {
      env: { NEXO_MICROAPP_ADMIN_AGENTS_ENABLED: "0" },
    });
    const reply = await rig.call("probe", "nexo/admin/agents/list", {});
    assert.equal(reply.error?.code, -32601);
    assert.match(reply.error?.message ?? "", /NEXO_MICROAPP_ADMIN_AGENTS_ENABLED=0/);
    assert.equal((await rig.call("probe", TAIL, {})).error, undefined, "other domains still answer");
  });

  it("a kill switch that is neither 0 nor 1 is refused when the frame is built", () => {
    const store = Store.inMemory();
    try {
      assert.throws(
        () =>
          new AdminFrame({
            services: { audit: store.audit },
            env: { NEXO_MICROAPP_ADMIN_PAIRING_ENABLED: "no" },
          }),
        (error: unknown) =>
          error instanceof AdminEnvError && error.variable === "NEXO_MICROAPP_ADMIN_PAIRING_ENABLED",
      );
    } finally {
      store.close();
    }
  });

  it("a request whose id is not app:<…> is answered -32600 and never run, even when granted", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "secrets_write"] }], {
      services: (_store, stateDir) => ({ secrets: { stateDir, env: {} } }),
    });
    for (const id of [7, "7", "req-1", "app:"]) {
      const reply = await rig.call(
        "probe",
        "nexo/admin/secrets/write",
        { name: "API_TOKEN", value: "s3cret-value" },
        id,
      );
      assert.equal(reply.id, id);
      assert.equal(reply.error?.code, -32600, `id ${JSON.stringify(id)}`);
      assert.match(reply.error?.message ?? "", /must carry an id starting with "app:"/);
    }
    const unknown = await rig.call("probe", "nexo/admin/nope", {}, 8);
    assert.equal(unknown.error?.code, -32600);
    assert.equal(existsSync(join(rig.stateDir, "secrets", "API_TOKEN.txt")), false);
    assert.deepEqual(
      rows(rig).map((row) => [row.result, row.error_code]),
      Array.from({ length: 5 }, () => ["error", -32600]),
    );
  });

  it("garbage, an oversize frame and a notification run nothing; the microapp keeps working", async () => {
    rig = await adminRig([{ id: "probe", fixture: "probe", grants: ["audit_read", "secrets_write"] }], {
      services: (_store, stateDir) => ({ secrets: { stateDir, env: {} } }),
    });
    const host = rig.manager.host("probe")!;
    const pid = host.session!.pid;
    await host.callTool({
      tool: "probe_raw",
      args: {
        lines: [
          "{not json",
          JSON.stringify({
            jsonrpc: "2.0",
            method: "nexo/admin/secrets/write",
            params: { name: "API_TOKEN", value: "s3cret-value" },
          }),
        ],
        oversize_bytes: 2 << 20,
      },
      binding_context: { agent_id: "t" },
    });
    assert.equal(existsSync(join(rig.stateDir, "secrets", "API_TOKEN.txt")), false);
    const problems = host.status().protocolProblems;
    assert.equal(problems.parse_error, 1);
    assert.equal(problems.oversize, 1);
    assert.equal(problems.invalid_request, 1, "the notification is counted, not executed");
    assert.equal((await rig.call("probe", TAIL, {})).error, undefined);
    assert.equal(host.session?.pid, pid);
  });
});

describe("admin frame: a Python microapp", () => {
  it("is served when granted and refused (and audited) when not", async () => {
    rig = await adminRig([{ id: "py-hello", fixture: "py-hello", grants: ["memory_query"] }], {
      services: (store) => ({ memory: store.memory }),
    });
    const granted = await rig.call("py-hello", "nexo/admin/memory/query", { agent_id: "ana" });
    assert.deepEqual(granted.result, { entries: [] });
    const denied = await rig.call("py-hello", TAIL, {});
    assert.equal(denied.error?.code, -32004);
    assert.equal(denied.error?.data?.capability, "audit_read");
    assert.deepEqual(
      rows(rig).map((row) => [row.microapp_id, row.method, row.result]),
      [
        ["py-hello", TAIL, "denied"],
        ["py-hello", "nexo/admin/memory/query", "ok"],
      ],
    );
  });
});
