/**
 * Sub-agent child threads, `subagent/progress` and `welcome/suggestions` when the AppServer is
 * served by `nexo start` (appserver.yaml; the built CLI, a real config directory, one daemon for
 * the file): a `Spawn` call of the daemon's agent leaves a child thread in the daemon's store, its
 * start and progress reach the turn's starter only, the graph change every connection, and the
 * child-thread methods and thread/list find it; welcome suggestions come from the agent's
 * workspace and the daemon's model, whatever path the client names.
 */
import assert from "node:assert/strict";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { type Message, WsClient } from "../../helpers/appserver-client.js";
import { startAppServerDaemon } from "../../helpers/appserver-daemon.js";

const TOKEN = "daemon-appserver-threads-token-42";
let mock: MockLlmServer;
let daemon: ChildProcessWithoutNullStreams;
let url: string;
let workspace: string;
let stderr: () => string = () => "";
const sockets: WsClient[] = [];

before(async () => {
  mock = new MockLlmServer();
  await mock.start();
  const dir = mkdtempSync(join(tmpdir(), "nexo-door-threads-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-door-threads-state-"));
  workspace = mkdtempSync(join(tmpdir(), "nexo-door-threads-ws-"));
  writeFileSync(join(workspace, "README.md"), "# Widgetry\nA service that sorts widgets.\n");
  const files: Record<string, string> = {
    "daemon.yaml": `state_dir: ${stateDir}\nhttp: { enabled: false }\n`,
    "llm.yaml": `providers:\n  mock: { type: anthropic, base_url: "${mock.url}", api_key: test-key }\n`,
    "agents.yaml": [
      "agents:",
      "  - id: helper",
      "    model: { provider: mock, model: claude-test }",
      `    workspace: ${workspace}`,
      "",
    ].join("\n"),
    "appserver.yaml": "listen: ws://127.0.0.1:0\ntoken: ${MY_TOKEN}\nagent: helper\n",
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const started = startAppServerDaemon(dir, TOKEN);
  daemon = started.child;
  stderr = started.stderr;
  url = await started.url;
});

after(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  if (daemon !== undefined && daemon.exitCode === null && daemon.signalCode === null) {
    const closed = new Promise((resolve) => daemon.once("close", resolve));
    daemon.kill("SIGTERM");
    await closed;
  }
  await mock?.close();
});

async function client(): Promise<WsClient> {
  const socket = new WsClient(`${url}?token=${TOKEN}`);
  sockets.push(socket);
  await socket.opened;
  await socket.initialize();
  return socket;
}

type ThreadRow = { id: string; source?: { kind: string; subAgent?: Record<string, unknown> } };
const methods = (socket: WsClient, method: string): Message[] =>
  socket.received.filter((m) => m.method === method);

describe("nexo start: sub-agent child threads", () => {
  test("a Spawn leaves a child thread in the daemon's store; events, lists and edges follow it", async () => {
    const starter = await client();
    const other = await client();
    const identity = { channelName: "desktop", userId: "me", workspacePath: workspace };
    const { thread } = await starter.request<{ thread: { id: string } }>("thread/start", { identity });
    mock.reset([
      {
        tool_calls: [
          {
            id: "toolu_spawn",
            name: "Spawn",
            input: { task: "CHILD-TASK: count widgets", description: "counter" },
          },
        ],
      },
      { match: "CHILD-TASK", text: "there are 3 widgets", usage: { input_tokens: 9, output_tokens: 4 } },
      { text: "the sub-agent counted 3" },
    ]);
    await starter.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "delegate" }] });
    const end = await starter.waitFor((m) => m.method === "turn/completed", "turn/completed");
    const items = (end.params!.turn as { items: Array<{ type: string; payload: Record<string, unknown> }> })
      .items;
    assert.ok(
      items.some((i) => i.type === "toolResult" && String(i.payload.result).includes("there are 3 widgets")),
      JSON.stringify(items),
    );

    // The child's start: thread/started to the turn's starter, the graph change to everyone.
    const child = methods(starter, "thread/started")
      .map((m) => m.params?.thread as ThreadRow)
      .find((t) => t.source?.kind === "subagent");
    assert.ok(child, "the starter got the child's thread/started");
    assert.equal(child.source?.subAgent?.parentThreadId, thread.id);
    assert.equal(child.source?.subAgent?.agentNickname, "counter");
    const graph = { parentThreadId: thread.id, childThreadId: child.id };
    assert.deepEqual((await starter.waitFor((m) => m.method === "subagent/graphChanged")).params, graph);
    assert.deepEqual((await other.waitFor((m) => m.method === "subagent/graphChanged")).params, graph);
    assert.deepEqual(
      methods(other, "thread/started").filter(
        (m) => (m.params as { thread: ThreadRow }).thread.id === child.id,
      ),
      [],
      "a connection not watching the turn does not get the child's start",
    );

    // Progress: to the starter only, the last snapshot completed with the child's usage.
    const progress = methods(starter, "subagent/progress").map(
      (m) => m.params as { threadId: string; entries: Array<Record<string, unknown>> },
    );
    assert.ok(progress.length >= 1);
    assert.deepEqual(progress.at(-1)?.entries, [
      { label: "counter", inputTokens: 9, outputTokens: 4, isCompleted: true },
    ]);
    assert.deepEqual(methods(other, "subagent/progress"), []);

    // The child is listed from another connection, read with its own conversation.
    const listed = async (params: Record<string, unknown>) =>
      (await other.request<{ data: ThreadRow[] }>("thread/list", { identity, ...params })).data.map(
        (t) => t.id,
      );
    assert.deepEqual(await listed({}), [thread.id]);
    assert.deepEqual((await listed({ includeSubAgents: true })).sort(), [thread.id, child.id].sort());
    const read = await other.request<{
      thread: { turns: Array<{ items: Array<{ payload: { text?: string } }> }> };
    }>("thread/read", { threadId: child.id, includeTurns: true });
    assert.ok(
      read.thread.turns.flatMap((t) => t.items).some((i) => i.payload.text === "there are 3 widgets"),
      JSON.stringify(read.thread.turns),
    );

    type Edge = { childThreadId: string; status: string };
    const children = await other.request<{ data: Array<{ edge: Edge; thread?: ThreadRow }> }>(
      "subagent/children/list",
      { parentThreadId: thread.id, includeThreads: true },
    );
    assert.deepEqual(
      children.data.map((c) => [c.edge.childThreadId, c.edge.status, c.thread?.id]),
      [[child.id, "open", child.id]],
    );
    const changes = methods(starter, "subagent/graphChanged").length;
    const closed = await other.request<{ edge: Edge }>("subagent/close", {
      parentThreadId: thread.id,
      childThreadId: child.id,
    });
    assert.equal(closed.edge.status, "closed");
    await starter.waitFor((m) => m.method === "subagent/graphChanged", "the close's graph change", changes);
    assert.deepEqual(
      (await other.request<{ data: unknown[] }>("subagent/children/list", { parentThreadId: thread.id }))
        .data,
      [],
    );
    const resumed = await other.request<{ edge: Edge }>("subagent/resume", {
      parentThreadId: thread.id,
      childThreadId: child.id,
    });
    assert.equal(resumed.edge.status, "open");

    await other.request("thread/delete", { threadId: thread.id });
    assert.equal((await other.call("thread/read", { threadId: child.id })).error?.code, -32010);
  });
});

describe("nexo start: welcome/suggestions", () => {
  test("from the agent's workspace and the daemon's model; the flag is advertised", async () => {
    const socket = new WsClient(`${url}?token=${TOKEN}`);
    sockets.push(socket);
    await socket.opened;
    const init = await socket.initialize();
    assert.deepEqual((init.result as { capabilities: { extensions?: unknown } }).capabilities.extensions, {
      welcomeSuggestions: true,
    });
    mock.reset([{ text: '[{"title": "Sort the widgets", "prompt": "Sort all widgets by size"}]' }]);
    type Result = { items: Array<Record<string, string>>; source: string };
    const reply = await socket.request<Result>("welcome/suggestions", {
      identity: { channelName: "desktop", workspacePath: workspace },
    });
    assert.equal(reply.source, "dynamic", stderr());
    assert.deepEqual(reply.items, [{ title: "Sort the widgets", prompt: "Sort all widgets by size" }]);
    assert.match(JSON.stringify(mock.requests().at(-1)?.body), /Widgetry/);
    // A remote client names its own machine's path: a thread it starts works in the agent's
    // workspace all the same, so its suggestions come from there too, and its threads' titles count.
    const remotePath = "/home/someone-else/projects/not-on-this-machine";
    await socket.request("thread/start", {
      identity: { channelName: "desktop", workspacePath: remotePath },
      displayName: "Index the remote gadgets",
    });
    mock.reset([{ text: '[{"title": "Check the gadgets", "prompt": "List every gadget"}]' }]);
    const remote = await socket.request<Result>("welcome/suggestions", {
      identity: { channelName: "desktop", workspacePath: remotePath },
    });
    assert.equal(remote.source, "dynamic", stderr());
    assert.deepEqual(remote.items, [{ title: "Check the gadgets", prompt: "List every gadget" }]);
    const asked = JSON.stringify(mock.requests().at(-1)?.body);
    assert.match(asked, /Widgetry/);
    assert.match(asked, /Index the remote gadgets/);
    assert.doesNotMatch(asked, /not-on-this-machine/);
  });
});
