/**
 * agent-creator in a real nexo daemon, as its author tests it (`nexo-plugin-sdk/microapp/testing`:
 * the project's `nexo` CLI started on a throwaway config directory, an agent calling the tools):
 * agents and skills really created through the admin RPC, a tool whose optional capability was not
 * granted answering the agent with the reason. Then, run from its TypeScript sources and driven by
 * the scripted daemon of the SDK's tests: the exact admin calls each tool makes and the config's
 * rules.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { InvalidParamsError } from "@nexo/wire";
import { microapp } from "@nexo/wire/schemas";
import { startTestDaemon, type TestDaemon } from "nexo-plugin-sdk/microapp/testing";
import { ScriptedDaemon } from "../../../../packages/sdk/test/helpers/scripted-daemon.js";

const EXECUTABLE = fileURLToPath(new URL("../main.mjs", import.meta.url));

const SOURCE = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const COMMAND = [process.execPath, "--conditions=@nexo/source", "--import", "tsx", SOURCE] as const;

const daemons: ScriptedDaemon[] = [];
afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

function start(grants: string[]): ScriptedDaemon {
  const daemon = new ScriptedDaemon({ command: COMMAND, extensionId: "agent-creator", grants });
  daemons.push(daemon);
  return daemon;
}

const CONFIG = {
  default_model: { provider: "anthropic", model: "claude-sonnet-5" },
  system_prompt: "Be kind.",
};

// The daemon checks every agent's provider: the test daemon has the offline scripted one.
const REAL_CONFIG = { ...CONFIG, default_model: { provider: "scripted", model: "nexo-scripted-demo" } };

describe("agent-creator in a real daemon", () => {
  let daemon: TestDaemon;
  before(async () => {
    // No `nexo` option: the CLI is the project's node_modules/.bin/nexo.
    daemon = await startTestDaemon({
      microapps: {
        "agent-creator": { path: EXECUTABLE, grants: ["agents_crud", "skills_crud"], config: REAL_CONFIG },
      },
    });
  });
  after(async () => {
    await daemon?.stop();
  });

  test("the agent creates an agent: agents.yaml gets it with the configured model and prompt", async () => {
    const created = await daemon.callTool("agent_creator_create_agent", { id: "carlos" });
    assert.equal(created.success, true, created.text);
    assert.deepEqual(JSON.parse(created.text), {
      id: "carlos",
      model: REAL_CONFIG.default_model,
      active: true,
    });
    const yaml = readFileSync(join(daemon.configDir, "agents.yaml"), "utf8");
    assert.match(yaml, /id: carlos/);
    assert.match(yaml, /Be kind\./);
    const listed = await daemon.callTool("agent_creator_list_agents");
    assert.match(listed.text, /"carlos"/);
  });

  test("a skill added by the agent lands in the daemon's skill store", async () => {
    const added = await daemon.callTool("agent_creator_add_skill", {
      name: "brief",
      body: "Answer briefly.",
    });
    assert.equal(added.success, true, added.text);
    assert.match(
      readFileSync(join(daemon.configDir, "skills", "brief", "SKILL.md"), "utf8"),
      /Answer briefly\./,
    );
    const skills = await daemon.callTool("agent_creator_list_skills");
    assert.match(skills.text, /"brief"/);
  });

  test("without llm_keys_crud, set_llm_key tells the agent why, and the daemon audits the refusal", async () => {
    const refused = await daemon.callTool("agent_creator_set_llm_key", {
      provider: "anthropic",
      base_url: "https://api.anthropic.com",
      api_key: "sk-ant-secret-123",
    });
    assert.equal(refused.success, false);
    assert.match(refused.text, /refused: the operator has not granted the capability llm_keys_crud/);
    const audit = await daemon.auditTail({ microappId: "agent-creator", result: "denied" });
    assert.deepEqual(
      audit.entries.map((row) => [row.method, row.capability]),
      [["nexo/admin/llm_providers/upsert", "llm_keys_crud"]],
    );
    assert.ok(!daemon.stderr().includes("sk-ant-secret-123"), "the key is not in the daemon's log");
  });
});

describe("agent-creator", () => {
  test("its catalogue: every tool prefixed agent_creator_", async () => {
    const daemon = start(["agents_crud"]);
    const result = microapp.MicroappInitializeResultSchema.parse(await daemon.initialize({ config: CONFIG }));
    assert.deepEqual(
      result.tools.map((t) => t.name),
      [
        "agent_creator_list_agents",
        "agent_creator_get_agent",
        "agent_creator_create_agent",
        "agent_creator_delete_agent",
        "agent_creator_list_llm_providers",
        "agent_creator_set_llm_key",
        "agent_creator_list_skills",
        "agent_creator_add_skill",
        "agent_creator_delete_skill",
      ],
    );
    assert.equal(microapp.microappToolCatalogSchema("agent-creator").safeParse(result.tools).success, true);
  });

  test("create_agent: the configured model and prompt unless given; the upsert is what reaches the daemon", async () => {
    const daemon = start(["agents_crud"]);
    await daemon.initialize({ config: CONFIG });
    daemon.serve("nexo/admin/agents/upsert", (params) => ({
      id: params.id,
      model: params.model!,
      active: true,
      allowed_tools: [],
      inbound_bindings: [],
      system_prompt: params.system_prompt ?? "",
    }));
    assert.deepEqual(await daemon.callTool("agent_creator_create_agent", { id: "carlos" }), {
      output: { id: "carlos", model: CONFIG.default_model, active: true },
    });
    assert.deepEqual(daemon.calls[0]?.params, {
      id: "carlos",
      model: CONFIG.default_model,
      system_prompt: "Be kind.",
    });
    await daemon.callTool("agent_creator_create_agent", { id: "dora", provider: "openai", model: "gpt-4.1" });
    assert.deepEqual(daemon.calls[1]?.params, {
      id: "dora",
      model: { provider: "openai", model: "gpt-4.1" },
      system_prompt: "Be kind.",
    });
    assert.deepEqual(await daemon.callTool("agent_creator_create_agent", { id: "eve", provider: "openai" }), {
      error: "give both provider and model, or neither for the default model",
    });
  });

  test("set_llm_key: refused without llm_keys_crud; granted, the key goes to the daemon once and is never echoed", async () => {
    const daemon = start(["agents_crud"]);
    await daemon.initialize({ config: CONFIG });
    const args = {
      provider: "anthropic",
      base_url: "https://api.anthropic.com",
      api_key: "sk-ant-secret-123",
    };
    assert.deepEqual(await daemon.callTool("agent_creator_set_llm_key", args), {
      error:
        "nexo/admin/llm_providers/upsert refused: the operator has not granted the capability llm_keys_crud",
    });
    daemon.grant("llm_keys_crud");
    daemon.serve("nexo/admin/llm_providers/upsert", (params) => ({
      id: params.id,
      base_url: params.base_url,
      api_key_env: "",
    }));
    const result = await daemon.callTool("agent_creator_set_llm_key", args);
    assert.deepEqual(result, {
      output: { provider: "anthropic", base_url: "https://api.anthropic.com", key: "stored" },
    });
    assert.deepEqual(daemon.calls[1]?.params, {
      id: "anthropic",
      base_url: "https://api.anthropic.com",
      api_key_secret_value: "sk-ant-secret-123",
    });
    assert.ok(!daemon.host.stderr.includes("sk-ant-secret-123"), "the key is not logged");
  });

  test("skills: add, list and delete through skills_crud", async () => {
    const daemon = start(["agents_crud", "skills_crud"]);
    await daemon.initialize({ config: CONFIG });
    const updated_at = "2026-05-04T10:00:00Z";
    daemon.serve("nexo/admin/skills/upsert", (params) => ({
      skill: { name: params.name, body: params.body, updated_at },
      created: true,
    }));
    daemon.serve("nexo/admin/skills/list", () => ({ skills: [{ name: "brief", updated_at }] }));
    daemon.serve("nexo/admin/skills/delete", () => ({ deleted: true }));
    assert.deepEqual(
      await daemon.callTool("agent_creator_add_skill", { name: "brief", body: "Answer briefly." }),
      {
        output: { name: "brief", created: true },
      },
    );
    assert.deepEqual(await daemon.callTool("agent_creator_list_skills"), {
      output: { skills: [{ name: "brief", description: "" }] },
    });
    assert.deepEqual(await daemon.callTool("agent_creator_delete_skill", { name: "brief" }), {
      output: { deleted: true },
    });
  });

  test("a config that breaks the settings' rules fails initialize naming the field", async () => {
    const daemon = start(["agents_crud"]);
    await assert.rejects(daemon.initialize({ config: { default_model: "opus" } }), (error: unknown) => {
      assert.ok(error instanceof InvalidParamsError);
      assert.match(
        error.message,
        /invalid config for agent-creator: default_model: must be \{provider, model\}/,
      );
      return true;
    });
  });
});
