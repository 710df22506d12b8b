/**
 * `thread/*` through the real `nexo app-server`: listing by identity, reading, status changes and
 * their notifications, rename and delete as other clients see them, rollback, the -32010/-32011
 * errors — and one store: a thread survives a restart with its whole history (tool calls included,
 * so the next model request carries them) and `nexo agent --json-stream --resume <id>` continues it.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { MockLlmServer, type MockScriptInput } from "@nexo/mock-llm";
import { AppServerProcess } from "../../../helpers/appserver-client.js";
import { JsonStreamClient } from "../../../helpers/jsonstream-client.js";

let mock: MockLlmServer;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  await mock.close();
});
const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

function start(options: { cwd?: string; stateDir?: string; args?: string[] } = {}): AppServerProcess {
  const server = new AppServerProcess({
    ...options,
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: mock.url },
  });
  processes.push(server);
  return server;
}

function identityOf(server: AppServerProcess, extra: Record<string, string> = {}) {
  return {
    channelName: "dotcraft-desktop",
    userId: "local",
    channelContext: `workspace:${server.workspace}`,
    workspacePath: server.workspace,
    ...extra,
  };
}

type Thread = {
  id: string;
  status: string;
  displayName?: string;
  turns?: Array<{
    id: string;
    status: string;
    items: Array<{ type: string; payload: Record<string, unknown> }>;
  }>;
};

async function runTurn(server: AppServerProcess, threadId: string, text: string) {
  const from = server.received.length;
  await server.request("turn/start", { threadId, input: [{ type: "text", text }] });
  return server.waitFor(
    (m) => ["turn/completed", "turn/failed", "turn/cancelled"].includes(m.method ?? ""),
    "the end of the turn",
    from,
  );
}

/** The messages of the nth request the mock received (1-based). */
function sent(
  n: number,
): Array<{ role: string; content: Array<{ type: string; text?: string; name?: string }> }> {
  return (mock.requests().filter((r) => r.path === "/v1/messages")[n - 1]!.body as { messages: never })
    .messages;
}

describe("thread/*", () => {
  test("thread/list matches the identity: workspace, user, channel context; crossChannelOrigins; archived", async () => {
    mock.reset([]);
    const server = start();
    await server.initialize();
    const mine = identityOf(server);
    const { thread: a } = await server.request<{ thread: Thread }>("thread/start", {
      identity: mine,
      displayName: "A",
    });
    await server.request("thread/start", { identity: identityOf(server, { userId: "someone-else" }) });
    await server.request("thread/start", { identity: identityOf(server, { channelContext: "chat:42" }) });
    const { thread: other } = await server.request<{ thread: Thread }>("thread/start", {
      identity: {
        channelName: "telegram",
        userId: "9",
        channelContext: "chat:9",
        workspacePath: server.workspace,
      },
    });
    await server.request("thread/start", { identity: { ...mine, workspacePath: "/elsewhere" } });

    const list = async (params: Record<string, unknown>) =>
      (await server.request<{ data: Array<{ id: string }> }>("thread/list", params)).data.map((t) => t.id);
    assert.deepEqual(await list({ identity: mine }), [a.id]);
    assert.deepEqual(
      new Set(await list({ identity: mine, crossChannelOrigins: ["telegram"] })),
      new Set([a.id, other.id]),
    );

    await server.request("thread/archive", { threadId: a.id });
    assert.deepEqual(await list({ identity: mine }), []);
    assert.deepEqual(await list({ identity: mine, includeArchived: true }), [a.id]);
    // Every thread/started reached this connection, after the response.
    assert.equal(server.notifications("thread/started").length, 5);
  });

  test("status: pause refuses input (-32011), resume reactivates; archived cannot be resumed; notifications", async () => {
    mock.reset([{ text: "hello back" }]);
    const server = start();
    await server.initialize();
    const { thread } = await server.request<{ thread: Thread }>("thread/start", {
      identity: identityOf(server),
    });
    await server.request("thread/pause", { threadId: thread.id });
    const refused = await server.call("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "hi" }],
    });
    assert.equal(refused.error?.code, -32011);
    assert.match(refused.error?.data?.detail ?? "", /paused/);
    const resumed = await server.request<{ thread: Thread }>("thread/resume", { threadId: thread.id });
    assert.equal(resumed.thread.status, "active");
    const resumedNote = await server.waitFor((m) => m.method === "thread/resumed");
    assert.equal((resumedNote.params as { resumedBy: string }).resumedBy, "test-client");
    assert.equal((await runTurn(server, thread.id, "hi")).method, "turn/completed");

    await server.request("thread/archive", { threadId: thread.id });
    assert.equal((await server.call("thread/resume", { threadId: thread.id })).error?.code, -32011);
    await server.request("thread/unarchive", { threadId: thread.id });
    await server.waitFor(
      (m) => m.method === "thread/statusChanged" && m.params?.previousStatus === "archived",
    );
    const changes = server
      .notifications("thread/statusChanged")
      .map((m) => [m.params!.previousStatus, m.params!.newStatus]);
    assert.deepEqual(changes, [
      ["active", "paused"],
      ["paused", "active"],
      ["active", "archived"],
      ["archived", "active"],
    ]);
  });

  test("-32010 for a thread that does not exist, on every thread method", async () => {
    const server = start();
    await server.initialize();
    const threadId = "no-such-thread";
    for (const [method, params] of [
      ["thread/read", { threadId }],
      ["thread/resume", { threadId }],
      ["thread/subscribe", { threadId }],
      ["thread/unsubscribe", { threadId }],
      ["thread/pause", { threadId }],
      ["thread/archive", { threadId }],
      ["thread/unarchive", { threadId }],
      ["thread/delete", { threadId }],
      ["thread/rename", { threadId, displayName: "x" }],
      ["thread/rollback", { threadId, numTurns: 1 }],
      ["thread/mode/set", { threadId, mode: "plan" }],
      ["thread/config/update", { threadId, config: { model: "m" } }],
      ["turn/start", { threadId, input: [{ type: "text", text: "x" }] }],
      ["turn/interrupt", { threadId, turnId: "turn_001" }],
      ["command/execute", { threadId, command: "/help" }],
    ] as const) {
      const reply = await server.call(method, params);
      assert.equal(reply.error?.code, -32010, `${method}: ${JSON.stringify(reply)}`);
      assert.match(reply.error?.data?.detail ?? "", /no-such-thread/);
    }
    const bad = await server.call("thread/start", { identity: identityOf(server), historyMode: "client" });
    assert.equal(bad.error?.code, -32602);
  });

  test("rename reaches every connection; delete every other one; rollback drops turns from the history", async () => {
    mock.reset([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const server = start({ args: ["--listen", "ws+stdio://127.0.0.1:0"] });
    const url = await server.websocketUrl();
    await server.initialize();
    const { WsClient } = await import("../../../helpers/appserver-client.js");
    const other = new WsClient(url);
    await other.opened;
    await other.initialize();
    try {
      const { thread } = await server.request<{ thread: Thread }>("thread/start", {
        identity: identityOf(server),
      });
      await server.request("thread/rename", { threadId: thread.id, displayName: "Renamed" });
      await server.waitFor((m) => m.method === "thread/renamed");
      await other.waitFor((m) => m.method === "thread/renamed" && m.params?.displayName === "Renamed");

      await runTurn(server, thread.id, "first");
      await runTurn(server, thread.id, "second");
      const rolled = await server.request<{ thread: Thread }>("thread/rollback", {
        threadId: thread.id,
        numTurns: 1,
      });
      assert.deepEqual(
        rolled.thread.turns!.map((t) => t.id),
        ["turn_001"],
      );
      assert.equal(
        (await server.call("thread/rollback", { threadId: thread.id, numTurns: 5 })).error?.code,
        -32602,
      );
      await runTurn(server, thread.id, "third");
      const texts = sent(3).map((m) => m.content.map((b) => b.text ?? b.type).join(""));
      assert.deepEqual(texts, ["first", "one", "third"]);
      const read = await server.request<{ thread: Thread }>("thread/read", {
        threadId: thread.id,
        includeTurns: true,
      });
      assert.deepEqual(
        read.thread.turns!.map((t) => t.id),
        ["turn_001", "turn_002"],
      );
      assert.equal(read.thread.displayName, "Renamed");

      await server.request("thread/delete", { threadId: thread.id });
      await other.waitFor((m) => m.method === "thread/deleted" && m.params?.threadId === thread.id);
      assert.equal(
        server.notifications("thread/deleted").length,
        0,
        "the deleting connection gets no thread/deleted",
      );
      assert.equal((await server.call("thread/read", { threadId: thread.id })).error?.code, -32010);
    } finally {
      other.close();
    }
  });

  test("one store: a thread survives a restart with its tool calls, and nexo agent --resume continues it", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "nexo-as-store-"));
    writeFileSync(join(workspace, "notes.txt"), "alpha\n");
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-as-state-"));
    const script: MockScriptInput = [
      { tool_calls: [{ id: "toolu_read_1", name: "Read", input: { file_path: "notes.txt" } }] },
      { text: "It says alpha." },
      { text: "Still alpha." },
      { text: "And from json-stream too." },
    ];
    mock.reset(script);
    const first = start({ cwd: workspace, stateDir });
    await first.initialize();
    const { thread } = await first.request<{ thread: Thread }>("thread/start", {
      identity: identityOf(first),
    });
    assert.equal((await runTurn(first, thread.id, "what is in notes.txt?")).method, "turn/completed");
    first.endInput();
    assert.equal((await first.exited).code, 0);

    const second = start({ cwd: workspace, stateDir });
    await second.initialize();
    const listed = await second.request<{ data: Array<{ id: string; turnCount: number }> }>("thread/list", {
      identity: identityOf(second),
    });
    assert.deepEqual(
      listed.data.map((t) => [t.id, t.turnCount]),
      [[thread.id, 1]],
    );
    const resumed = await second.request<{ thread: Thread }>("thread/resume", { threadId: thread.id });
    const types = resumed.thread.turns![0]!.items.map((item) => item.type);
    assert.deepEqual(types, ["userMessage", "toolCall", "toolResult", "agentMessage"]);
    assert.equal((await runTurn(second, thread.id, "and now?")).method, "turn/completed");
    const history = sent(3);
    assert.deepEqual(
      history.map((m) => m.content.map((b) => b.type)),
      [["text"], ["tool_use"], ["tool_result"], ["text"], ["text"]],
    );
    second.endInput();
    await second.exited;

    const agent = new JsonStreamClient(
      ["--provider", "anthropic", "--resume", thread.id, "--workspace", workspace],
      {
        env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: mock.url },
        stateDir,
      },
    );
    try {
      const ready = await agent.waitFor((e) => e.type === "ready");
      assert.equal(ready.session_id, thread.id);
      await agent.turn("m1", "one more");
      assert.equal(sent(4).length, 7);
    } finally {
      agent.end();
      await agent.exited;
    }
  });
});
