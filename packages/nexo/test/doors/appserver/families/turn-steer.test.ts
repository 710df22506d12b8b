/**
 * `turn/steer` through the real `nexo app-server`: a queued input promoted to guidance for the
 * running turn moves to the front of the queue as `guidancePending` (thread/queue/updated says so),
 * and runs as soon as the running turn ends, before the inputs queued ahead of it, as a
 * `userMessage` with `deliveryMode: "guidance"`. A stale `expectedTurnId` is -32014, an unknown
 * queued input -32602, and a steer with nothing running -32014.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { appServerTestbed } from "../../../helpers/appserver-client.js";

const { mock, start } = appServerTestbed();

type Turn = { id: string; items: Array<{ type: string; payload: Record<string, unknown> }> };
type Queued = { id: string; status?: string };

describe("turn/steer", () => {
  test("a steered input goes first, as guidance; stale or unknown ids are typed errors", async () => {
    const server = start();
    await server.initialize();
    mock().reset([{ text: "first", delay_ms: 2000 }, { text: "steered" }, { text: "queued" }]);
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test", userId: "me", workspacePath: server.workspace },
    });
    const threadId = thread.id;
    await server.request("thread/subscribe", { threadId });
    const { turn } = await server.request<{ turn: Turn }>("turn/start", {
      threadId,
      input: [{ type: "text", text: "one" }],
    });
    const a = await server.request<{ queuedInput: Queued }>("turn/enqueue", {
      threadId,
      input: [{ type: "text", text: "queued first" }],
    });
    const b = await server.request<{ queuedInput: Queued }>("turn/enqueue", {
      threadId,
      input: [{ type: "text", text: "steer me" }],
    });

    const stale = await server.call("turn/steer", {
      threadId,
      expectedTurnId: "turn_stale",
      queuedInputId: b.queuedInput.id,
    });
    assert.equal(stale.error?.code, -32014, JSON.stringify(stale));
    const unknown = await server.call("turn/steer", {
      threadId,
      expectedTurnId: turn.id,
      queuedInputId: "q_nope",
    });
    assert.equal(unknown.error?.code, -32602);

    const steered = await server.request<{ turnId: string; queuedInputs: Queued[] }>("turn/steer", {
      threadId,
      expectedTurnId: turn.id,
      queuedInputId: b.queuedInput.id,
    });
    assert.equal(steered.turnId, turn.id);
    assert.deepEqual(
      steered.queuedInputs.map((q) => [q.id, q.status]),
      [
        [b.queuedInput.id, "guidancePending"],
        [a.queuedInput.id, "queued"],
      ],
    );
    const updated = server.notifications("thread/queue/updated", threadId).at(-1);
    const queue = (updated?.params?.queuedInputs ?? []) as Queued[];
    assert.equal(queue[0]?.status, "guidancePending");

    await server.waitFor(
      () => server.notifications("turn/completed", threadId).length === 3,
      "the running, the steered and the queued turn to complete",
    );
    const users = server
      .notifications("turn/completed", threadId)
      .map((m) => (m.params!.turn as Turn).items.find((i) => i.type === "userMessage")?.payload);
    assert.deepEqual(
      users.map((u) => [u?.text, u?.deliveryMode]),
      [
        ["one", "normal"],
        ["steer me", "guidance"],
        ["queued first", "queued"],
      ],
    );
    // Nothing runs now: steering is refused.
    const idle = await server.call("turn/steer", {
      threadId,
      expectedTurnId: turn.id,
      queuedInputId: a.queuedInput.id,
    });
    assert.equal(idle.error?.code, -32014);
  });
});
