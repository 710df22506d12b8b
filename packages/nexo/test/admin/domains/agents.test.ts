/**
 * `nexo/admin/agents/*` and `nexo/admin/reload` over a real daemon: agents.yaml edited with its
 * comments kept, each change live at once (the running daemon's agents), refusals located and
 * leaving the file as it was, and each method refused without agents_crud.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";
import { EXAMPLE_PLUGINS } from "../../helpers/daemon-dir.js";

const AGENTS = `# Agents of the test deployment.
agents:
  # The front desk.
  - id: ana
    description: front desk # shown to operators
    model: { provider: scripted, model: nexo-scripted-demo }
    system_prompt: "first prompt"
    inbound_bindings: [{ plugin: loopback }]

  # Kept for later; not routed to.
  - id: zed
    active: false
    model: { provider: scripted, model: nexo-scripted-demo }
`;

const PLUGINS = `plugins:
  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}
`;

describe("admin agents/* and reload", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin({ "agents.yaml": AGENTS, "plugins.yaml": PLUGINS }, ["agents_crud"]);
  });
  after(() => admin?.stop());

  it("are refused without agents_crud, and audited as denied", async () => {
    for (const [method, params] of [
      ["nexo/admin/agents/list", {}],
      ["nexo/admin/agents/get", { agent_id: "ana" }],
      ["nexo/admin/agents/upsert", { id: "ana", system_prompt: "x" }],
      ["nexo/admin/agents/delete", { agent_id: "zed" }],
      ["nexo/admin/reload", {}],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "agents_crud");
    }
    assert.match(admin.env.read("agents.yaml"), /first prompt/);
  });

  it("list: sorted, with the filters", async () => {
    const all = resultOf(await admin.ops("nexo/admin/agents/list", {}));
    assert.deepEqual(all, {
      agents: [
        { id: "ana", active: true, model_provider: "scripted", bindings_count: 1 },
        { id: "zed", active: false, model_provider: "scripted", bindings_count: 0 },
      ],
    });
    const active = resultOf<{ agents: { id: string }[] }>(
      await admin.ops("nexo/admin/agents/list", { active_only: true, plugin_filter: "loopback" }),
    );
    assert.deepEqual(
      active.agents.map((a) => a.id),
      ["ana"],
    );
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/agents/list", { tenant_id: "acme" })), {
      agents: [],
    });
    errorOf(await admin.ops("nexo/admin/agents/list", { active_only: "yes" }), -32602);
  });

  it("get: the detail; an unknown agent is not_found", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/agents/get", { agent_id: "ana" })), {
      id: "ana",
      model: { provider: "scripted", model: "nexo-scripted-demo" },
      active: true,
      allowed_tools: [],
      inbound_bindings: [{ plugin: "loopback" }],
      system_prompt: "first prompt",
      description: "front desk",
    });
    const missing = errorOf(await admin.ops("nexo/admin/agents/get", { agent_id: "nobody" }), -32603);
    assert.match(missing.message, /^not_found: /);
    assert.deepEqual(missing.data, { reason: "not_found", subject: "agent", id: "nobody" });
    errorOf(await admin.ops("nexo/admin/agents/get", {}), -32602);
  });

  it("upsert: one line changed, comments kept, live at once", async () => {
    const beforeText = admin.env.read("agents.yaml");
    const detail = resultOf<{ system_prompt: string }>(
      await admin.ops("nexo/admin/agents/upsert", {
        id: "ana",
        system_prompt: "second prompt",
        language: "Spanish",
      }),
    );
    assert.equal(detail.system_prompt, "second prompt");
    const text = admin.env.read("agents.yaml");
    assert.ok(text.includes("# The front desk.") && text.includes("# shown to operators"));
    assert.ok(text.includes("# Kept for later; not routed to."));
    assert.equal(
      text
        .replace("system_prompt: second prompt", 'system_prompt: "first prompt"')
        .replace("    language: Spanish\n", ""),
      beforeText,
    );
    const running = admin.env.daemon.spec.agents.find((agent) => agent.id === "ana");
    assert.equal(running?.systemPrompt?.startsWith("second prompt"), true);
  });

  it("upsert: a new agent needs a model; with one it is created, bound and running", async () => {
    const noModel = errorOf(await admin.ops("nexo/admin/agents/upsert", { id: "bob" }), -32602);
    assert.match(noModel.message, /model/);
    errorOf(await admin.ops("nexo/admin/agents/upsert", { system_prompt: "no id" }), -32602);

    const created = resultOf(
      await admin.ops("nexo/admin/agents/upsert", {
        id: "bob",
        model: { provider: "scripted", model: "nexo-scripted-demo" },
        inbound_bindings: [{ plugin: "loopback", instance: "b" }],
      }),
    );
    assert.deepEqual(created.inbound_bindings, [{ plugin: "loopback", instance: "b" }]);
    assert.ok(admin.env.daemon.summary().agents.includes("bob"));
  });

  it("upsert: a change that would break the directory is -32602 with the located problem; nothing written", async () => {
    const beforeText = admin.env.read("agents.yaml");
    const refused = errorOf(
      await admin.ops("nexo/admin/agents/upsert", { id: "ana", model: { provider: "nope", model: "x" } }),
      -32602,
    );
    const data = refused.data as { reason: string; issues: { file: string; key: string; line: number }[] };
    assert.equal(data.reason, "invalid_config");
    assert.ok(data.issues[0]?.file.endsWith("agents.yaml"));
    assert.equal(data.issues[0]?.key, "agents[0].model.provider");
    assert.equal(typeof data.issues[0]?.line, "number");
    assert.equal(admin.env.read("agents.yaml"), beforeText);
  });

  it("delete: removes the block and the running agent; absent is removed: false", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/agents/delete", { agent_id: "bob" })), {
      removed: true,
    });
    assert.ok(!admin.env.read("agents.yaml").includes("id: bob"));
    assert.equal(admin.env.daemon.summary().agents.includes("bob"), false);
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/agents/delete", { agent_id: "bob" })), {
      removed: false,
    });
    errorOf(await admin.ops("nexo/admin/agents/delete", { agent_id: "" }), -32602);
  });

  it("reload: applies an edit made outside the admin RPC; an invalid directory keeps the running config", async () => {
    admin.env.write("agents.yaml", admin.env.read("agents.yaml").replace("second prompt", "edited by hand"));
    const { reloaded_at_ms } = resultOf<{ reloaded_at_ms: number }>(await admin.ops("nexo/admin/reload", {}));
    assert.ok(Math.abs(reloaded_at_ms - Date.now()) < 60_000);
    const running = () => admin.env.daemon.spec.agents.find((agent) => agent.id === "ana")?.systemPrompt;
    assert.equal(running()?.startsWith("edited by hand"), true);

    admin.env.write("agents.yaml", `${admin.env.read("agents.yaml")}  - id: broken\n`);
    const failed = errorOf(await admin.ops("nexo/admin/reload", {}), -32603);
    assert.equal((failed.data as { reason: string }).reason, "reload_failed");
    assert.equal(running()?.startsWith("edited by hand"), true);
    errorOf(await admin.ops("nexo/admin/reload", "now"), -32602);
  });
});
