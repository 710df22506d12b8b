/**
 * `nexo start` serving the AppServer from appserver.yaml (the built CLI, a real config directory):
 * the WebSocket needs the token, a thread is a session of the daemon's store answered by the agent
 * appserver.yaml names — with the daemon's provider and a plugin's tool, approved by the client —
 * and SIGTERM stops the door and the daemon with exit 0, the turn persisted.
 */
import assert from "node:assert/strict";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { Store } from "../../../src/store/index.js";
import { upgradeStatus, WsClient } from "../../helpers/appserver-client.js";
import { startAppServerDaemon } from "../../helpers/appserver-daemon.js";
import { EXAMPLE_PLUGINS } from "../../helpers/daemon-dir.js";

const TOKEN = "daemon-appserver-token-0123";
let mock: MockLlmServer;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  await mock.close();
});
const children: ChildProcessWithoutNullStreams[] = [];
const sockets: WsClient[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

function configDir(): { dir: string; stateDir: string; workspace: string } {
  const dir = mkdtempSync(join(tmpdir(), "nexo-door-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-door-state-"));
  const workspace = mkdtempSync(join(tmpdir(), "nexo-door-ws-"));
  const files: Record<string, string> = {
    "daemon.yaml": `state_dir: ${stateDir}\nhttp: { enabled: false }\n`,
    "llm.yaml": `providers:\n  mock: { type: anthropic, base_url: "${mock.url}", api_key: test-key }\n`,
    "agents.yaml": [
      "agents:",
      "  - id: ana",
      "    model: { provider: scripted, model: nexo-scripted-demo }",
      "  - id: dice-bot",
      "    model: { provider: mock, model: claude-test }",
      `    workspace: ${workspace}`,
      "",
    ].join("\n"),
    "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "demo-tools")}\n`,
    "appserver.yaml": "listen: ws://127.0.0.1:0\ntoken: ${MY_TOKEN}\nagent: dice-bot\n",
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { dir, stateDir, workspace };
}

/** Starts `nexo start` on `dir`; killed after each test if still running. */
function startDaemon(dir: string) {
  const daemon = startAppServerDaemon(dir, TOKEN);
  children.push(daemon.child);
  return daemon;
}

describe("nexo start with appserver.yaml", () => {
  test("serves the AppServer with the daemon's agent, provider, plugin tool and store; SIGTERM exits 0", async () => {
    mock.reset([
      {
        text: "Rolling.",
        tool_calls: [{ id: "toolu_dice_1", name: "demo_dice", input: { count: 2, sides: 6, seed: 7 } }],
        usage: { input_tokens: 30, output_tokens: 10 },
      },
      { text: "You rolled them.", usage: { input_tokens: 60, output_tokens: 5 } },
    ]);
    const { dir, stateDir } = configDir();
    const daemon = startDaemon(dir);
    const url = await daemon.url;
    assert.equal(await upgradeStatus(url), 401, "the token of appserver.yaml is required");

    const client = new WsClient(`${url}?token=${TOKEN}`);
    sockets.push(client);
    await client.opened;
    const approvals: Array<Record<string, unknown>> = [];
    client.onServerRequest = (method, params) => {
      if (method !== "item/approval/request") return undefined;
      approvals.push(params);
      return { decision: "accept" };
    };
    const init = await client.initialize();
    const caps = (init.result as { capabilities: Record<string, boolean> }).capabilities;
    assert.equal(caps.modelCatalogManagement, true, "the management families run on the daemon's services");
    const models = await client.request<{ models: Array<{ id: string }> }>("model/list", {});
    assert.ok(
      models.models.some((model) => model.id === "claude-test"),
      JSON.stringify(models),
    );
    const { thread } = await client.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "desktop", userId: "me", workspacePath: "/somewhere/else" },
    });
    await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "roll 2 dice" }],
    });
    const completed = await client.waitFor((m) => m.method === "turn/completed", "turn/completed");
    const turn = (
      completed.params as {
        turn: { status: string; items: Array<{ type: string; payload: Record<string, unknown> }> };
      }
    ).turn;
    assert.equal(turn.status, "completed");
    const call = turn.items.find((item) => item.type === "toolCall");
    assert.equal(call?.payload.toolName, "demo_dice", "the plugin's tool ran through the daemon");
    assert.equal(approvals.length, 1, "a plugin tool asks the client first");
    assert.equal(approvals[0]?.approvalType, "shell");
    const agentText = turn.items
      .filter((item) => item.type === "agentMessage")
      .map((item) => item.payload.text);
    assert.ok(agentText.includes("You rolled them."), JSON.stringify(agentText));
    // The provider of llm.yaml answered: the mock saw the tool result of the plugin.
    const second = mock.requests()[1]?.body as { messages: Array<{ content: unknown }> } | undefined;
    assert.match(JSON.stringify(second?.messages.at(-1)?.content), /tool_result/);

    const since = Date.now();
    daemon.child.kill("SIGTERM");
    const exit = await daemon.exited;
    assert.equal(exit.code, 0, daemon.stderr());
    assert.ok(exit.at - since < 15_000, `stopped after ${exit.at - since} ms`);

    // One store: the thread is a session of the daemon's database, filed under the agent.
    const store = Store.open(join(stateDir, "nexo.db"));
    try {
      const session = store.sessions.get(thread.id);
      assert.equal(session?.agentId, "dice-bot");
      const roles = store.transcripts.messages(thread.id).map((m) => m.role);
      assert.deepEqual(roles, ["user", "assistant", "user", "assistant"]);
    } finally {
      store.close();
    }
  });

  test("an appserver.yaml the daemon cannot serve stops nexo start before anything runs", async () => {
    const { dir } = configDir();
    writeFileSync(join(dir, "appserver.yaml"), "listen: ws://0.0.0.0:0\nagent: dice-bot\n");
    const daemon = startDaemon(dir);
    daemon.url.catch(() => undefined);
    const exit = await daemon.exited;
    assert.equal(exit.code, 2, daemon.stderr());
    assert.match(daemon.stderr(), /appserver\.yaml:1:\d+.*token is required/s);
  });
});
