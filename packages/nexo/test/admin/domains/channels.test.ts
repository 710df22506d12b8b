/**
 * `nexo/admin/channels/*` over a real daemon: MCP-channel approvals kept in agents.yaml
 * (`channels.approved`), approve idempotent, revoke removing one entry, each edit keeping the
 * file's comments and reloaded; doctor checks approvals against mcp.yaml and the agent's bindings.
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

const AGENTS = `# Agents.
agents:
  - id: ana # the front desk
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
`;

const MCP = `servers:
  inbox:
    transport: stdio
    command: "true"
    enabled: false
`;

describe("admin channels/*", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin({ "agents.yaml": AGENTS, "mcp.yaml": MCP }, ["channels_crud"]);
  });
  after(() => admin?.stop());

  it("are refused without channels_crud", async () => {
    for (const [method, params] of [
      ["nexo/admin/channels/list", {}],
      ["nexo/admin/channels/approve", { agent_id: "ana", server_name: "inbox" }],
      ["nexo/admin/channels/revoke", { agent_id: "ana", server_name: "inbox" }],
      ["nexo/admin/channels/doctor", {}],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "channels_crud");
    }
  });

  it("approve: written to the agent, comments kept, idempotent; an unknown agent is not_found", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/channels/list", {})), { entries: [] });
    const entry = { agent_id: "ana", server_name: "inbox", allowlist: [0] };
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/channels/approve", entry)), entry);
    const text = admin.env.read("agents.yaml");
    assert.ok(text.startsWith("# Agents.\nagents:\n  - id: ana # the front desk\n"));
    assert.match(text, /channels:\n {6}approved:\n {8}- server_name: inbox\n {10}allowlist:\n {12}- 0\n/);
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/channels/approve", entry)), entry);
    assert.equal(admin.env.read("agents.yaml"), text, "approving again writes nothing");
    resultOf(await admin.ops("nexo/admin/channels/approve", { agent_id: "ana", server_name: "ghost" }));
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/channels/list", { agent_id: "ana" })), {
      entries: [entry, { agent_id: "ana", server_name: "ghost" }],
    });
    errorOf(
      await admin.ops("nexo/admin/channels/approve", { agent_id: "nobody", server_name: "inbox" }),
      -32603,
    );
    errorOf(await admin.ops("nexo/admin/channels/approve", { agent_id: "ana" }), -32602);
    errorOf(
      await admin.ops("nexo/admin/channels/approve", { agent_id: "ana", server_name: "x", allowlist: [-1] }),
      -32602,
    );
  });

  it("doctor: verdicts from mcp.yaml and the bindings", async () => {
    resultOf(
      await admin.ops("nexo/admin/channels/approve", {
        agent_id: "ana",
        server_name: "inbox",
        allowlist: [0, 3],
      }),
    );
    const { verdicts } = resultOf<{ verdicts: { server_name: string; status: string; message: string }[] }>(
      await admin.ops("nexo/admin/channels/doctor", {}),
    );
    assert.deepEqual(
      verdicts.map((v) => [v.server_name, v.status]),
      [
        ["inbox", "warning"],
        ["ghost", "error"],
      ],
    );
    assert.match(verdicts[0]?.message ?? "", /disabled/);
    const forBinding = resultOf<{ verdicts: unknown[] }>(
      await admin.ops("nexo/admin/channels/doctor", { binding_index: 1 }),
    );
    assert.equal(forBinding.verdicts.length, 1, "inbox is allowlisted for 0 and 3 only");
  });

  it("revoke: removes the entry; absent is removed: false", async () => {
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/channels/revoke", { agent_id: "ana", server_name: "ghost" })),
      {
        removed: true,
      },
    );
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/channels/revoke", { agent_id: "ana", server_name: "ghost" })),
      {
        removed: false,
      },
    );
    assert.deepEqual(
      resultOf(await admin.ops("nexo/admin/channels/revoke", { agent_id: "ana", server_name: "inbox" })),
      {
        removed: true,
      },
    );
    assert.ok(!admin.env.read("agents.yaml").includes("channels:"));
    assert.ok(admin.env.read("agents.yaml").includes("# the front desk"));
  });
});
