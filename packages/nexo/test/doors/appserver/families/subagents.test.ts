/**
 * `subagent/profiles/*` through the real `nexo app-server --config DIR`: agents.yaml's agents as
 * profiles, enabling and disabling (`active`), replacing a definition with the file's comments
 * kept, removing, and the family's error codes.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import type { AppServerProcess } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, LLM_YAML, managedServer } from "./management-helpers.js";

const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

type Profile = { name: string; enabled: boolean; isDefault: boolean; definition: Record<string, unknown> };

describe("AppServer subagent/profiles/*", () => {
  test("list, setEnabled, upsert (replace) and remove over agents.yaml", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.subAgentManagement, true);

    const listed = await server.request<{ defaultName: string; profiles: Profile[] }>(
      "subagent/profiles/list",
    );
    assert.equal(listed.defaultName, "helper");
    assert.deepEqual(
      listed.profiles.map((p) => [p.name, p.enabled, p.isDefault]),
      [
        ["helper", true, true],
        ["reviewer", false, false],
      ],
    );
    assert.deepEqual(listed.profiles[0]!.definition.model, { provider: "scripted", model: "scripted-1" });

    const enabled = await server.request<{ profile: Profile }>("subagent/profiles/setEnabled", {
      name: "reviewer",
      enabled: true,
    });
    assert.equal(enabled.profile.enabled, true);
    assert.match(config.read("agents.yaml"), /active: true/);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.deepEqual(changed.params?.regions, ["subagent"]);

    // Replacing helper's definition drops its description; the comments stay.
    const replaced = await server.request<{ profile: Profile }>("subagent/profiles/upsert", {
      name: "helper",
      definition: { model: { provider: "main", model: "claude-other" }, system_prompt: "Be brief." },
    });
    assert.deepEqual(replaced.profile.definition.model, { provider: "main", model: "claude-other" });
    assert.equal(replaced.profile.definition.description, undefined);
    const text = config.read("agents.yaml");
    assert.match(text, /# the team's agents/);
    assert.match(text, /id: helper # the one people talk to/);
    assert.doesNotMatch(text, /answers questions/);

    const created = await server.request<{ profile: Profile }>("subagent/profiles/upsert", {
      name: "writer",
      definition: { model: { provider: "scripted", model: "scripted-2" } },
    });
    assert.equal(created.profile.name, "writer");
    assert.deepEqual(await server.request("subagent/profiles/remove", { name: "writer" }), {
      name: "writer",
      removed: true,
    });
    assert.doesNotMatch(config.read("agents.yaml"), /writer/);
  });

  test("errors: unknown profile -32083, invalid definition -32084 (file untouched)", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server } = await managedServer(config, processes);
    for (const [method, params] of [
      ["subagent/profiles/remove", { name: "ghost" }],
      ["subagent/profiles/setEnabled", { name: "ghost", enabled: true }],
    ] as const) {
      const reply = await server.call(method, params);
      assert.equal(reply.error?.code, -32083, method);
      assert.match(reply.error?.data?.detail ?? "", /ghost/);
    }
    const invalid = await server.call("subagent/profiles/upsert", {
      name: "writer",
      definition: { model: { provider: "nowhere", model: "x" } },
    });
    assert.equal(invalid.error?.code, -32084);
    assert.match(invalid.error?.data?.detail ?? "", /agents\.yaml.*nowhere/s);
    assert.equal(config.read("agents.yaml"), AGENTS_YAML);
    assert.equal((await server.call("subagent/profiles/setEnabled", { name: "helper" })).error?.code, -32602);
  });

  test("settings/update answers nexo's fixed settings and refuses what nexo cannot do", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.subAgentSessions, true, "child threads: subagent-sessions.test.ts");
    const fixed = { externalCliSessionResumeEnabled: false, model: null };
    assert.deepEqual(await server.request("subagent/settings/update", { model: null }), { settings: fixed });
    assert.deepEqual(
      await server.request("subagent/settings/update", { externalCliSessionResumeEnabled: false }),
      { settings: fixed },
    );
    const model = await server.call("subagent/settings/update", { model: "claude-small" });
    assert.equal(model.error?.code, -32602);
    assert.match(model.error?.data?.detail ?? "", /model of the agent that spawns them/);
    const cli = await server.call("subagent/settings/update", { externalCliSessionResumeEnabled: true });
    assert.equal(cli.error?.code, -32602);
    assert.match(cli.error?.data?.detail ?? "", /no external-CLI sub-agents/);
    assert.equal(config.read("agents.yaml"), AGENTS_YAML);
  });
});
