/**
 * Sub-agent child threads through the real `nexo app-server` and a mock model: a `Spawn` call
 * gives its sub-agent a thread of its own (linked source, its own transcript), announced with
 * `thread/started` and `subagent/graphChanged`; `subagent/children/list|close|resume`,
 * `thread/list includeSubAgents`, and archive/unarchive/delete carrying the children along.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { appServerTestbed } from "../../../helpers/appserver-client.js";

const { mock, start } = appServerTestbed();

type Edge = {
  parentThreadId: string;
  childThreadId: string;
  spawnCallId: string;
  depth: number;
  status: string;
};
type ThreadRow = {
  id: string;
  source?: { kind: string; subAgent?: Record<string, unknown> };
  status: string;
};

describe("sub-agent child threads", () => {
  test("Spawn makes a child thread; list, read, close, resume, archive and delete follow it", async () => {
    const server = start();
    const init = await server.initialize();
    assert.equal(
      (init.result as { capabilities: Record<string, unknown> }).capabilities.subAgentSessions,
      true,
    );
    const identity = { channelName: "test", userId: "me", workspacePath: server.workspace };
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", { identity });
    mock().reset([
      {
        tool_calls: [
          { id: "toolu_spawn", name: "Spawn", input: { task: "CHILD-TASK: greet", description: "greeter" } },
        ],
      },
      { match: "CHILD-TASK", text: "child says hi" },
      { text: "parent done" },
    ]);
    await server.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "delegate it" }],
    });
    const end = await server.waitFor((m) => m.method === "turn/completed", "the parent's turn");
    const items = (end.params!.turn as { items: Array<{ type: string; payload: Record<string, unknown> }> })
      .items;
    assert.ok(
      items.some((i) => i.type === "toolResult" && String(i.payload.result).includes("child says hi")),
    );

    const started = server.notifications("thread/started").map((m) => m.params?.thread as ThreadRow);
    const child = started.find((t) => t.source?.kind === "subagent");
    assert.ok(child, "the child's thread/started reached the turn's starter");
    assert.deepEqual(
      {
        parent: child.source?.subAgent?.parentThreadId,
        root: child.source?.subAgent?.rootThreadId,
        call: child.source?.subAgent?.spawnCallId,
        depth: child.source?.subAgent?.depth,
        nickname: child.source?.subAgent?.agentNickname,
      },
      { parent: thread.id, root: thread.id, call: "toolu_spawn", depth: 1, nickname: "greeter" },
    );
    const graph = await server.waitFor((m) => m.method === "subagent/graphChanged", "the graph change");
    assert.deepEqual(graph.params, { parentThreadId: thread.id, childThreadId: child.id });

    // The child's conversation is its own transcript.
    const read = await server.request<{
      thread: { turns: Array<{ items: Array<{ type: string; payload: { text?: string } }> }> };
    }>("thread/read", { threadId: child.id, includeTurns: true });
    const texts = read.thread.turns.flatMap((t) => t.items).map((i) => i.payload.text);
    assert.ok(texts.includes("child says hi"), JSON.stringify(texts));

    const listed = async (params: Record<string, unknown>) =>
      (await server.request<{ data: ThreadRow[] }>("thread/list", { identity, ...params })).data.map(
        (t) => t.id,
      );
    assert.deepEqual(await listed({}), [thread.id]);
    assert.deepEqual((await listed({ includeSubAgents: true })).sort(), [thread.id, child.id].sort());

    const children = await server.request<{ data: Array<{ edge: Edge; thread?: ThreadRow }> }>(
      "subagent/children/list",
      { parentThreadId: thread.id, includeThreads: true },
    );
    assert.equal(children.data.length, 1);
    assert.equal(children.data[0]!.edge.childThreadId, child.id);
    assert.equal(children.data[0]!.edge.status, "open");
    assert.equal(children.data[0]!.thread?.id, child.id);

    const closed = await server.request<{ edge: Edge }>("subagent/close", {
      parentThreadId: thread.id,
      childThreadId: child.id,
    });
    assert.equal(closed.edge.status, "closed");
    assert.deepEqual(
      (await server.request<{ data: unknown[] }>("subagent/children/list", { parentThreadId: thread.id }))
        .data,
      [],
    );
    const withClosed = await server.request<{ data: Array<{ edge: Edge }> }>("subagent/children/list", {
      parentThreadId: thread.id,
      includeClosed: true,
    });
    assert.equal(withClosed.data[0]?.edge.status, "closed");
    const resumed = await server.request<{ edge: Edge }>("subagent/resume", {
      parentThreadId: thread.id,
      childThreadId: child.id,
    });
    assert.equal(resumed.edge.status, "open");
    const wrong = await server.call("subagent/close", { parentThreadId: child.id, childThreadId: thread.id });
    assert.equal(wrong.error?.code, -32602);
    assert.equal(
      (await server.call("subagent/children/list", { parentThreadId: "nope" })).error?.code,
      -32010,
    );

    // Archive and unarchive carry the child along; delete removes it too.
    await server.request("thread/archive", { threadId: thread.id });
    const status = async (id: string) =>
      (await server.request<{ thread: ThreadRow }>("thread/read", { threadId: id })).thread.status;
    assert.equal(await status(child.id), "archived");
    await server.request("thread/unarchive", { threadId: thread.id });
    assert.equal(await status(child.id), "active");
    await server.request("thread/delete", { threadId: thread.id });
    assert.equal((await server.call("thread/read", { threadId: child.id })).error?.code, -32010);
  });
});
