/**
 * `workspace/config/schema|update` through the real CLI: over stdio, `nexo app-server --config DIR`
 * edits the files (the workspace agent's model and approval mode in agents.yaml, its provider's
 * key reference and endpoint in llm.yaml, memory.yaml's switch), comments kept, refusals leaving
 * the files untouched; over WebSocket, the daemon (`nexo start`) applies a new model and API key
 * to the very next turn.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import type { AppServerProcess } from "../../../helpers/appserver-client.js";
import { configDir, daemonServer, managedServer } from "./management-helpers.js";

const processes: AppServerProcess[] = [];
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});
let mock: MockLlmServer;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await mock.close();
});

const AGENTS = `# the team
agents:
  - id: ana # answers the workspace
    model: { provider: main, model: claude-one }
    approval:
      allow: [info] # reading is fine
`;
const LLM = `providers:
  main: # the house account
    type: anthropic
    api_key: \${ANTHROPIC_API_KEY}
    default_model: claude-default
`;

type Settings = Record<string, string | boolean | null>;

function files(stateDir: string) {
  return configDir({
    "daemon.yaml": `state_dir: ${stateDir}\nhttp: { enabled: false }\n`,
    "agents.yaml": AGENTS,
    "llm.yaml": LLM,
  });
}

describe("AppServer workspace/config/* over stdio", () => {
  test("schema, then each field edits its file with the comments kept", async () => {
    const config = files(join(configDir({}).dir, "state"));
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.workspaceConfigManagement, true);

    const { sections } = await server.request<{ sections: Array<{ section: string; path: string[] }> }>(
      "workspace/config/schema",
    );
    assert.deepEqual(
      sections.map((s) => [s.section, s.path.join("/")]),
      [
        ["agent", "agents.yaml/agents/ana"],
        ["provider", "llm.yaml/providers/main"],
        ["memory", "memory.yaml/long_term"],
        ["appserver", "appserver.yaml"],
      ],
    );

    const model = await server.request<Settings>("workspace/config/update", { model: "claude-two" });
    assert.equal(model.model, "claude-two");
    assert.equal(model.apiKey, "${ANTHROPIC_API_KEY}", "the reference, never a key");
    assert.match(config.read("agents.yaml"), /model: \{ provider: main, model: claude-two \}/);
    assert.match(config.read("agents.yaml"), /- id: ana # answers the workspace/);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.deepEqual(changed.params?.regions, ["workspace.model"]);
    assert.equal(changed.params?.source, "workspace/config/update");

    // "Default" falls back to the provider's default_model.
    assert.equal(
      (await server.request<Settings>("workspace/config/update", { model: "Default" })).model,
      "claude-default",
    );

    const policy = await server.request<Settings>("workspace/config/update", {
      defaultApprovalPolicy: "autoApprove",
    });
    assert.equal(policy.defaultApprovalPolicy, "autoApprove");
    assert.match(
      config.read("agents.yaml"),
      /approval:\n\s+allow: \[info\] # reading is fine\n\s+mode: yolo/,
    );
    const cleared = await server.request<Settings>("workspace/config/update", {
      defaultApprovalPolicy: null,
    });
    assert.equal(cleared.defaultApprovalPolicy, null);
    assert.doesNotMatch(config.read("agents.yaml"), /mode:/);

    const endpoint = await server.request<Settings>("workspace/config/update", {
      endPoint: "http://127.0.0.1:9/v1",
    });
    assert.equal(endpoint.endPoint, "http://127.0.0.1:9/v1");
    assert.match(
      config.read("llm.yaml"),
      /main: # the house account\n(.*\n)*\s+base_url: http:\/\/127\.0\.0\.1:9\/v1/,
    );
    assert.equal(
      (await server.request<Settings>("workspace/config/update", { endPoint: "" })).endPoint,
      null,
    );
    assert.doesNotMatch(config.read("llm.yaml"), /base_url/);

    const memory = await server.request<Settings>("workspace/config/update", {
      memoryAutoConsolidateEnabled: false,
      welcomeSuggestionsEnabled: false,
    });
    assert.equal(memory.memoryAutoConsolidateEnabled, false);
    assert.equal(memory.welcomeSuggestionsEnabled, false);
    assert.match(config.read("memory.yaml"), /long_term:\n\s+enabled: false/);
    assert.match(config.read("appserver.yaml"), /^welcome_suggestions: false$/m);
    const welcome = await server.request<Settings>("workspace/config/update", {
      welcomeSuggestionsEnabled: true,
    });
    assert.equal(welcome.welcomeSuggestionsEnabled, true);
    assert.match(config.read("appserver.yaml"), /^welcome_suggestions: true$/m);
  });

  test("an API key goes to the secret store; the file gets its reference and the answer never the key", async () => {
    const stateDir = join(configDir({}).dir, "state");
    const config = files(stateDir);
    const { server } = await managedServer(config, processes);
    const key = "sk-ant-workspace-key-0123456789";
    const reply = await server.call("workspace/config/update", { apiKey: key });
    assert.equal((reply.result as Settings).apiKey, "${LLM_MAIN_API_KEY}");
    assert.ok(!JSON.stringify(reply).includes(key));
    assert.match(config.read("llm.yaml"), /api_key: \$\{LLM_MAIN_API_KEY\}/);
    assert.match(config.read("llm.yaml"), /main: # the house account/);
    assert.ok(!config.read("llm.yaml").includes(key));
    const secret = join(stateDir, "secrets", "LLM_MAIN_API_KEY.txt");
    assert.equal(readFileSync(secret, "utf8").trim(), key);
    assert.equal(statSync(secret).mode & 0o777, 0o600);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.deepEqual(changed.params?.regions, ["workspace.apiKey"]);
  });

  test("refusals are -32602 with the reason, and leave every file as it was", async () => {
    const config = files(join(configDir({}).dir, "state"));
    const { server } = await managedServer(config, processes);
    for (const [params, reason] of [
      [{}, /at least one of/],
      [{ skillsSelfLearningEnabled: true }, /do not write skills/],
      [{ defaultApprovalPolicy: "sometimes" }, /not one of: default, autoApprove/],
      [{ endPoint: "not a url" }, /base_url/],
    ] as const) {
      const reply = await server.call("workspace/config/update", params);
      assert.equal(reply.error?.code, -32602, JSON.stringify(params));
      assert.match(reply.error?.data?.detail ?? "", reason);
    }
    assert.equal(config.read("agents.yaml"), AGENTS);
    assert.equal(config.read("llm.yaml"), LLM);
  });

  test("without a single workspace agent, edits that need one say how to name it", async () => {
    const config = configDir({
      "agents.yaml": `${AGENTS}  - id: bob\n    model: { provider: scripted, model: s }\n`,
      "llm.yaml": LLM,
    });
    const { server } = await managedServer(config, processes);
    const reply = await server.call("workspace/config/update", { model: "x" });
    assert.equal(reply.error?.code, -32602);
    assert.match(reply.error?.data?.detail ?? "", /appserver\.yaml.*agent: <id>/);
    // The scripted model has no llm.yaml entry to hold a key.
    config.write("appserver.yaml", "agent: bob\n");
    const { server: named } = await managedServer(config, processes);
    const keyless = await named.call("workspace/config/update", { apiKey: "sk-whatever-0123456789" });
    assert.equal(keyless.error?.code, -32602);
    assert.match(keyless.error?.data?.detail ?? "", /provider "scripted", which llm\.yaml does not define/);
  });
});

describe("AppServer workspace/config/update in the daemon", () => {
  test("a new model and API key answer the next turn, in an open thread too", async () => {
    mock.reset([
      { text: "Hello from the old model.", usage: { input_tokens: 5, output_tokens: 5 } },
      { text: "Hello from the new model.", usage: { input_tokens: 5, output_tokens: 5 } },
    ]);
    const stateDir = join(configDir({}).dir, "state");
    const { client } = await daemonServer(
      {
        "daemon.yaml": `state_dir: ${stateDir}\nhttp: { enabled: false }\n`,
        "llm.yaml": `providers:\n  mock: # local\n    type: anthropic\n    base_url: "${mock.url}"\n    api_key: old-key-0123456789\n`,
        "agents.yaml": "agents:\n  - id: ana\n    model: { provider: mock, model: claude-one }\n",
      },
      "ana",
      cleanups,
    );
    const { thread } = await client.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test" },
    });
    const turn = async () => {
      const from = client.received.length;
      await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "hi" }] });
      await client.waitFor((m) => m.method === "turn/completed", "turn/completed", from);
    };
    await turn();
    const settings = await client.request<Settings>("workspace/config/update", {
      model: "claude-two",
      apiKey: "sk-ant-fresh-key-0123456789",
    });
    assert.equal(settings.model, "claude-two");
    await turn();
    const [before, after] = mock.requests().filter((r) => r.path.endsWith("/messages"));
    assert.equal((before!.body as { model: string }).model, "claude-one");
    assert.equal((after!.body as { model: string }).model, "claude-two");
    assert.equal(after!.headers.authorization, "Bearer sk-ant-fresh-key-0123456789");
    assert.equal(
      (after!.body as { messages: unknown[] }).messages.length,
      3,
      "the thread's history came along",
    );
  });
});
