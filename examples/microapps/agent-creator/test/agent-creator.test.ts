/**
 * agent-creator, run as a real process (from its TypeScript sources) and driven by the scripted
 * daemon of the SDK's tests: the admin calls each tool makes, the config's defaults, and a tool
 * whose optional capability was not granted answering the agent with the reason.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { InvalidParamsError } from "@nexo/wire";
import { microapp } from "@nexo/wire/schemas";
import { ScriptedDaemon } from "../../../../packages/sdk/test/helpers/scripted-daemon.js";

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
  default_model: { provider: "anthropic", model: "claude-sonnet-4-5" },
  system_prompt: "Be kind.",
};

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
