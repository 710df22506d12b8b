/**
 * `subagent/progress` through the real `nexo app-server` and a mock model: while a `Spawn`
 * sub-agent runs, the turn's audience gets full snapshots of it (label, the tool it runs, its
 * tokens, its end), the last one — completed, with the sub-agent's whole usage — before
 * `turn/completed`. Delivered like every thread-scoped event: to the turn's starter and the
 * thread's subscribers, each once, never to a bystander nor to a client that opted out of it.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { appServerTestbed, type Message } from "../../../helpers/appserver-client.js";

const { mock, start, connect } = appServerTestbed();

type Entry = {
  label: string;
  currentTool?: string;
  inputTokens: number;
  outputTokens: number;
  isCompleted: boolean;
};
type Progress = { threadId: string; turnId: string; entries: Entry[] };

const progressOf = (messages: Message[]): Progress[] =>
  messages.filter((m) => m.method === "subagent/progress").map((m) => m.params as unknown as Progress);

describe("subagent/progress", () => {
  test("snapshots of a running sub-agent reach the starter and subscribers, the last before turn/completed", async () => {
    const server = start({ args: ["--listen", "ws+stdio://127.0.0.1:0"] });
    const url = await server.websocketUrl();
    await server.initialize();
    writeFileSync(join(server.workspace, "notes.txt"), "the answer is 42\n");
    const identity = { channelName: "test", userId: "me", workspacePath: server.workspace };
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", { identity });

    const watcher = connect(url);
    await watcher.opened;
    await watcher.initialize();
    await watcher.request("thread/subscribe", { threadId: thread.id });
    const optedOut = connect(url);
    await optedOut.opened;
    await optedOut.initialize({ optOutNotificationMethods: ["subagent/progress"] });
    await optedOut.request("thread/subscribe", { threadId: thread.id });
    const bystander = connect(url);
    await bystander.opened;
    await bystander.initialize();

    mock().reset([
      {
        tool_calls: [
          {
            id: "toolu_spawn",
            name: "Spawn",
            input: { task: "CHILD-TASK: read notes.txt", description: "reader" },
          },
        ],
      },
      {
        match: "CHILD-TASK",
        tool_calls: [{ id: "toolu_read", name: "Read", input: { file_path: "notes.txt" } }],
        usage: { input_tokens: 11, output_tokens: 7 },
      },
      { match_any: "CHILD-TASK", text: "it says 42", usage: { input_tokens: 20, output_tokens: 5 } },
      { text: "the sub-agent says 42" },
    ]);
    const { turn } = await server.request<{ turn: { id: string } }>("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "delegate it" }],
    });
    await server.waitFor((m) => m.method === "turn/completed", "the starter's turn/completed");
    await watcher.waitFor((m) => m.method === "turn/completed", "the subscriber's turn/completed");
    await optedOut.waitFor((m) => m.method === "turn/completed", "the opted-out subscriber's turn/completed");

    const seen = progressOf(server.received);
    assert.ok(seen.length >= 1, "the starter got subagent/progress");
    for (const snapshot of seen) {
      assert.equal(snapshot.threadId, thread.id);
      assert.equal(snapshot.turnId, turn.id);
      assert.equal(snapshot.entries.length, 1, JSON.stringify(snapshot));
      assert.equal(snapshot.entries[0]!.label, "reader");
    }
    const last = seen.at(-1)!;
    assert.deepEqual(last.entries[0], {
      label: "reader",
      inputTokens: 31,
      outputTokens: 12,
      isCompleted: true,
    });
    assert.ok(
      seen.slice(0, -1).every((s) => !s.entries[0]!.isCompleted),
      "only the last snapshot says completed",
    );
    // The last snapshot precedes the turn's last event.
    const order = server.received.map((m) => m.method);
    assert.ok(order.lastIndexOf("subagent/progress") < order.indexOf("turn/completed"));

    // The subscriber got the same snapshots, once each; the opted-out one and the bystander none.
    assert.deepEqual(progressOf(watcher.received), seen);
    assert.deepEqual(progressOf(optedOut.received), []);
    assert.deepEqual(progressOf(bystander.received), []);
  });
  test("an interrupted turn's last snapshot shows its stopped sub-agent completed, before turn/cancelled", async () => {
    const server = start();
    await server.initialize();
    const identity = { channelName: "test", userId: "me", workspacePath: server.workspace };
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", { identity });
    mock().reset([
      { tool_calls: [{ id: "toolu_spawn", name: "Spawn", input: { task: "CHILD-TASK: take your time" } }] },
      { match: "CHILD-TASK", text: "too late", delay_ms: 60_000 },
    ]);
    const { turn } = await server.request<{ turn: { id: string } }>("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "delegate slowly" }],
    });
    await server.waitFor((m) => m.method === "subagent/progress", "the sub-agent's first snapshot");
    await server.request("turn/interrupt", { threadId: thread.id, turnId: turn.id });
    await server.waitFor((m) => m.method === "turn/cancelled", "turn/cancelled");
    const seen = progressOf(server.received);
    assert.deepEqual(seen.at(-1)?.entries, [
      { label: "CHILD-TASK: take your time", inputTokens: 0, outputTokens: 0, isCompleted: true },
    ]);
    const order = server.received.map((m) => m.method);
    assert.ok(order.lastIndexOf("subagent/progress") < order.indexOf("turn/cancelled"));
  });
});
