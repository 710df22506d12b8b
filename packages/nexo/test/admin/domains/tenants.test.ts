/**
 * `nexo/admin/tenants/*` over a real daemon: tenants.yaml edited with its comments kept, agent
 * counts from agents.yaml, created_at stamped on creation, a reference to a provider the tenant
 * does not have refused with its location, and delete kept while agents belong (unless purge).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";

const TENANTS = `# Customers of this deployment.
tenants:
  - id: acme # the first one
    display_name: ACME
`;

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
  - id: acme-bot
    tenant_id: acme
    model: { provider: scripted, model: nexo-scripted-demo }
`;

describe("admin tenants/*", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin({ "tenants.yaml": TENANTS, "agents.yaml": AGENTS }, ["tenants_crud"]);
  });
  after(() => admin?.stop());

  it("are refused without tenants_crud", async () => {
    for (const [method, params] of [
      ["nexo/admin/tenants/list", {}],
      ["nexo/admin/tenants/get", { tenant_id: "acme" }],
      ["nexo/admin/tenants/upsert", { id: "globex", display_name: "Globex" }],
      ["nexo/admin/tenants/delete", { tenant_id: "acme" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "tenants_crud");
    }
  });

  it("list and get: with agent counts; an absent tenant is null", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/tenants/list", {})), {
      tenants: [{ id: "acme", display_name: "ACME", active: true, agent_count: 1 }],
    });
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/tenants/get", { tenant_id: "acme" })), {
      tenant: { id: "acme", display_name: "ACME", active: true, llm_provider_refs: [], metadata: {} },
    });
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/tenants/get", { tenant_id: "nope" })), {
      tenant: null,
    });
    errorOf(await admin.ops("nexo/admin/tenants/get", {}), -32602);
  });

  it("upsert: creates with created_at, comments kept; changes only the given keys", async () => {
    const created = resultOf<{ created: boolean; tenant: { created_at: string; metadata: unknown } }>(
      await admin.ops("nexo/admin/tenants/upsert", {
        id: "globex",
        display_name: "Globex",
        metadata: { plan: "pro" },
      }),
    );
    assert.equal(created.created, true);
    assert.ok(Math.abs(Date.parse(created.tenant.created_at) - Date.now()) < 60_000);
    assert.deepEqual(created.tenant.metadata, { plan: "pro" });
    const text = admin.env.read("tenants.yaml");
    assert.ok(text.startsWith("# Customers of this deployment.\ntenants:\n  - id: acme # the first one\n"));

    const changed = resultOf<{ created: boolean; tenant: { active: boolean } }>(
      await admin.ops("nexo/admin/tenants/upsert", {
        id: "globex",
        display_name: "Globex Inc",
        active: false,
      }),
    );
    assert.deepEqual([changed.created, changed.tenant.active], [false, false]);
    const listed = resultOf<{ tenants: { id: string }[] }>(
      await admin.ops("nexo/admin/tenants/list", { active_only: true }),
    );
    assert.deepEqual(
      listed.tenants.map((t) => t.id),
      ["acme"],
    );
  });

  it("upsert: a bad id, a blank name or a provider the tenant does not have is -32602; nothing written", async () => {
    const beforeText = admin.env.read("tenants.yaml");
    errorOf(await admin.ops("nexo/admin/tenants/upsert", { id: "Bad Id", display_name: "x" }), -32602);
    errorOf(await admin.ops("nexo/admin/tenants/upsert", { id: "ok", display_name: "  " }), -32602);
    const refused = errorOf(
      await admin.ops("nexo/admin/tenants/upsert", {
        id: "acme",
        display_name: "ACME",
        llm_provider_refs: ["nope"],
      }),
      -32602,
    );
    assert.equal((refused.data as { reason: string }).reason, "invalid_config");
    assert.equal(admin.env.read("tenants.yaml"), beforeText);
  });

  it("delete: kept while agents belong (orphaned_agents); purge takes them along", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/tenants/delete", { tenant_id: "acme" })), {
      removed: false,
      orphaned_agents: ["acme-bot"],
    });
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/tenants/delete", { tenant_id: "globex" })), {
      removed: true,
    });
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/tenants/delete", { tenant_id: "acme", purge: true })),
      {
        removed: true,
        purged_agents: ["acme-bot"],
      },
    );
    assert.ok(!admin.env.read("agents.yaml").includes("acme-bot"));
    assert.equal(admin.env.daemon.summary().agents.includes("acme-bot"), false);
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/tenants/delete", { tenant_id: "acme" })), {
      removed: false,
    });
  });
});
