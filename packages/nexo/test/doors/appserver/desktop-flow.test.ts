/**
 * The acceptance flow, as DotCraft Desktop drives it in remote mode against
 * `nexo app-server --listen ws://…` with a token: list threads, start one, subscribe, read it, start
 * a turn whose model edits a file, get `item/approval/request` with approvalType "file", accept,
 * see the fileChange item with its diff and `turn/completed` with the full answer — every event
 * once, in the order the protocol promises — and the edit on disk.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { AppServerProcess, type Message, WsClient } from "../../helpers/appserver-client.js";

const TOKEN = "desktop-token-0123456789";
let mock: MockLlmServer;
before(async () => {
  mock = new MockLlmServer();
  await mock.start();
});
after(async () => {
  await mock.close();
});
const processes: AppServerProcess[] = [];
const sockets: WsClient[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close();
  for (const p of processes.splice(0)) await p.stop();
});

/** Desktop's initialize capabilities, as its WireProtocolClient sends them. */
const DESKTOP_CAPABILITIES = {
  approvalSupport: true,
  streamingSupport: true,
  commandExecutionStreaming: true,
  toolExecutionLifecycle: true,
  configChange: true,
  optOutNotificationMethods: [],
  nodeRepl: { backend: "desktop-node" },
  browserUse: { backend: "desktop-iab", protocolVersion: 2, supportsCancel: true },
};

describe("DotCraft Desktop, remote mode", () => {
  test("chat with an approved file edit", async () => {
    mock.reset([
      {
        text: "I'll fix the capitalisation.",
        tool_calls: [
          {
            id: "toolu_edit_1",
            name: "Edit",
            input: { file_path: "notes.txt", old_string: "first line", new_string: "FIRST LINE" },
          },
        ],
        usage: { input_tokens: 50, output_tokens: 20 },
      },
      { text: "Done: the first line is now upper case.", usage: { input_tokens: 80, output_tokens: 10 } },
    ]);
    const server = new AppServerProcess({
      args: ["--listen", "ws://127.0.0.1:0", "--token", TOKEN],
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: mock.url },
      stdin: "ignore",
    });
    processes.push(server);
    writeFileSync(join(server.workspace, "notes.txt"), "first line\nsecond line\n");
    const url = await server.websocketUrl();
    const desktop = new WsClient(`${url}?token=${TOKEN}`);
    sockets.push(desktop);
    await desktop.opened;
    const approvals: Array<Record<string, unknown>> = [];
    desktop.onServerRequest = (method, params) => {
      assert.equal(method, "item/approval/request");
      approvals.push(params);
      return { decision: "accept" };
    };
    const init = await desktop.initialize(DESKTOP_CAPABILITIES, "dotcraft-desktop");
    const caps = (init.result as { capabilities: Record<string, boolean> }).capabilities;
    assert.equal(caps.threadManagement, true);
    assert.equal(caps.approvalFlow, true);

    const workspacePath = server.workspace;
    const identity = {
      channelName: "dotcraft-desktop",
      userId: "local",
      channelContext: `workspace:${workspacePath}`,
      workspacePath,
    };
    const listed = await desktop.request<{ data: unknown[] }>("thread/list", {
      identity,
      crossChannelOrigins: [],
      includeSubAgents: true,
    });
    assert.deepEqual(listed.data, []);
    const { thread } = await desktop.request<{ thread: { id: string; status: string } }>("thread/start", {
      identity,
      historyMode: "server",
    });
    assert.equal(thread.status, "active");
    await desktop.request("thread/subscribe", { threadId: thread.id });
    const read = await desktop.request<{ thread: { turns: unknown[] } }>("thread/read", {
      threadId: thread.id,
      includeTurns: true,
    });
    assert.deepEqual(read.thread.turns, []);

    const from = desktop.received.length;
    const start = await desktop.call("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Capitalise the first line of notes.txt" }],
      identity, // Desktop sends its identity along; unknown params are ignored
    });
    const turn = (start.result as { turn: { id: string; status: string } }).turn;
    assert.equal(turn.status, "running");
    const done = await desktop.waitFor((m) => m.method === "turn/completed", "turn/completed", from);
    const events = desktop.received.slice(from);
    const index = (predicate: (m: Message) => boolean) => events.findIndex(predicate);

    // Order: the response, then turn/started, then the approval request; turn/completed last of the turn.
    const responseAt = index((m) => m.id === start.id && m.method === undefined);
    const startedAt = index((m) => m.method === "turn/started");
    const approvalAt = index((m) => m.method === "item/approval/request");
    const completedAt = index((m) => m.method === "turn/completed");
    assert.ok(
      responseAt < startedAt && startedAt < approvalAt && approvalAt < completedAt,
      JSON.stringify(events),
    );
    const turnEvents = events.filter((m) => m.method?.startsWith("item/") || m.method?.startsWith("turn/"));
    assert.equal(turnEvents.at(-1)?.method, "turn/completed");

    // Each event once, although the starter is also a subscriber.
    assert.equal(events.filter((m) => m.method === "turn/started").length, 1);
    assert.equal(events.filter((m) => m.method === "turn/completed").length, 1);
    assert.equal(approvals.length, 1);

    const approval = approvals[0]!;
    assert.equal(approval.approvalType, "file");
    assert.equal(approval.threadId, thread.id);
    assert.equal(approval.turnId, turn.id);
    assert.equal(approval.target, "notes.txt");
    for (const key of ["itemId", "requestId", "operation", "scopeKey", "reason"]) {
      assert.equal(typeof approval[key], "string", key);
    }
    const resolved = events.find((m) => m.method === "item/approval/resolved");
    assert.ok(resolved);
    assert.equal((resolved.params!.item as { payload: { decision: string } }).payload.decision, "accept");

    const completedItems = events
      .filter((m) => m.method === "item/completed")
      .map((m) => m.params!.item as { type: string; payload: Record<string, unknown> });
    const change = completedItems.find((item) => item.type === "fileChange");
    assert.ok(change, JSON.stringify(completedItems.map((i) => i.type)));
    assert.equal(change.payload.status, "completed");
    const [entry] = change.payload.changes as Array<{ path: string; kind: string; diff: string }>;
    assert.equal(entry!.path, "notes.txt");
    assert.equal(entry!.kind, "update");
    assert.match(entry!.diff, /^-first line$/m);
    assert.match(entry!.diff, /^\+FIRST LINE$/m);
    const toolCall = completedItems.find((item) => item.type === "toolCall");
    assert.equal(toolCall?.payload.toolName, "Edit");

    const finalTurn = (done.params!.turn as { items: Array<{ type: string; payload: { text?: string } }> })
      .items;
    const answers = finalTurn.filter((item) => item.type === "agentMessage").map((item) => item.payload.text);
    assert.deepEqual(answers, ["I'll fix the capitalisation.", "Done: the first line is now upper case."]);
    const deltas = events
      .filter((m) => m.method === "item/agentMessage/delta")
      .map((m) => m.params!.delta)
      .join("");
    assert.equal(deltas, answers.join(""));
    assert.equal(readFileSync(join(workspacePath, "notes.txt"), "utf8"), "FIRST LINE\nsecond line\n");

    // The thread is listed now, and reads back with the turn.
    const again = await desktop.request<{ data: Array<{ id: string; turnCount: number }> }>("thread/list", {
      identity,
    });
    assert.deepEqual(
      again.data.map((t) => [t.id, t.turnCount]),
      [[thread.id, 1]],
    );
  });
});
