/**
 * `nexo/admin/credentials/*` over a real daemon: the blob stored 0600 under the state dir, each
 * listed agent bound in agents.yaml (comments kept, reloaded), revoke unbinding every agent and
 * deleting the blob, list joining both; nexo's one-active-agent-per-binding rule reported, not
 * broken; the payload never in the audit.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";

const AGENTS = `# Agents.
agents:
  - id: ana # front desk
    model: { provider: scripted, model: nexo-scripted-demo }
  - id: bob
    model: { provider: scripted, model: nexo-scripted-demo }
  - id: zed
    active: false
    model: { provider: scripted, model: nexo-scripted-demo }
`;

describe("admin credentials/*", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin({ "agents.yaml": AGENTS }, ["credentials_crud"]);
  });
  after(() => admin?.stop());
  const blob = () => join(admin.env.stateDir, "credentials", "whatsapp", "shared.json");

  it("are refused without credentials_crud", async () => {
    for (const [method, params] of [
      ["nexo/admin/credentials/list", {}],
      ["nexo/admin/credentials/register", { channel: "whatsapp", agent_ids: [], payload: {} }],
      ["nexo/admin/credentials/revoke", { channel: "whatsapp" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "credentials_crud");
    }
  });

  it("register: the blob 0600, the agents bound (comments kept, live), validation null", async () => {
    const answer = resultOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "whatsapp",
        instance: "shared",
        agent_ids: ["bob", "zed"],
        payload: { token: "wa-very-secret-token" },
      }),
    );
    assert.deepEqual(answer, {
      summary: { channel: "whatsapp", instance: "shared", agent_ids: ["bob", "zed"] },
      validation: null,
    });
    assert.equal(statSync(blob()).mode & 0o777, 0o600);
    assert.ok(readFileSync(blob(), "utf8").includes("wa-very-secret-token"));
    const text = admin.env.read("agents.yaml");
    assert.ok(text.includes("# front desk"));
    const bob = admin.env.daemon.spec.agents.find((agent) => agent.id === "bob");
    assert.deepEqual(bob?.bindings, [{ plugin: "whatsapp", instance: "shared" }]);
    // Registering again binds nobody twice.
    resultOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "whatsapp",
        instance: "shared",
        agent_ids: ["bob"],
        payload: { token: "wa-very-secret-token" },
      }),
    );
    assert.equal(admin.env.read("agents.yaml"), text);
    const database = readFileSync(join(admin.rig.stateDir, "nexo.db")).toString("latin1");
    assert.ok(!database.includes("wa-very-secret-token"), "the audit hashes a redacted payload");
  });

  it("list: each credential with the agents bound to it", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/credentials/list", {})), {
      credentials: [{ channel: "whatsapp", instance: "shared", agent_ids: ["bob", "zed"] }],
    });
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/credentials/list", { channel_filter: "telegram" })),
      {
        credentials: [],
      },
    );
  });

  it("register: refuses unknown agents, unsafe names, and a second active agent on one binding", async () => {
    const beforeText = admin.env.read("agents.yaml");
    errorOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "whatsapp",
        agent_ids: ["nobody"],
        payload: {},
      }),
      -32602,
    );
    errorOf(
      await admin.ops("nexo/admin/credentials/register", { channel: "../etc", agent_ids: [], payload: {} }),
      -32602,
    );
    errorOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "whatsapp",
        instance: "../../x",
        agent_ids: [],
        payload: {},
      }),
      -32602,
    );
    errorOf(await admin.ops("nexo/admin/credentials/register", { channel: "whatsapp", payload: {} }), -32602);
    const twoActive = errorOf(
      await admin.ops("nexo/admin/credentials/register", {
        channel: "whatsapp",
        instance: "shared",
        agent_ids: ["ana"],
        payload: { token: "wa-very-secret-token" },
      }),
      -32602,
    );
    assert.equal((twoActive.data as { reason: string }).reason, "invalid_config");
    assert.equal(admin.env.read("agents.yaml"), beforeText);
    assert.ok(!existsSync(join(admin.env.stateDir, "etc")));
  });

  it("revoke: unbinds every agent and deletes the blob; again is removed: false", async () => {
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/credentials/revoke", { channel: "whatsapp", instance: "shared" })),
      { removed: true, unbound_agents: ["bob", "zed"] },
    );
    assert.ok(!existsSync(blob()));
    assert.ok(!admin.env.read("agents.yaml").includes("whatsapp"));
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/credentials/revoke", { channel: "whatsapp", instance: "shared" })),
      { removed: false, unbound_agents: [] },
    );
  });
});
