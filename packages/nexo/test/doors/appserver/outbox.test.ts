/**
 * The outbound queue through the real `nexo app-server`: a fast reader over stdio gets the whole
 * text of a 5,000-delta answer in its deltas, in the protocol's order (deltas merge while the pipe
 * pushes back; none is dropped); a subscriber that stops reading its WebSocket never stalls the
 * turn or the client that started it, and once it reads again it either has the turn's final state
 * or was closed with 1008 — the outbox's overflow policy (outbox.ts). The server keeps taking new
 * clients.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { appServerTestbed } from "../../helpers/appserver-client.js";

const bed = appServerTestbed();

type Turn = { items: Array<{ type: string; payload: { text?: string } }> };

type Item = { type: string; id?: string; payload: { text?: string } };

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

describe("a fast reader over stdio", () => {
  test("gets every delta of a long answer: their text is item/completed's, in order, nothing missing", async () => {
    // 5,000 deltas (the mock sends two words a delta), read as fast as the pipe allows.
    const text = Array.from({ length: 10_000 }, (_, i) => `w${i % 89}`).join(" ");
    bed.mock().reset([{ text }]);
    const server = bed.start();
    await server.initialize();
    const { thread } = await server.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test", userId: "me", workspacePath: server.workspace },
    });
    const from = server.received.length;
    const reply = server.call("turn/start", { threadId: thread.id, input: [{ type: "text", text: "talk" }] });
    const done = await server.waitFor((m) => m.method === "turn/completed", "turn/completed", from);
    await reply;
    const seen = server.received.slice(from);
    const at = (predicate: (m: (typeof seen)[number]) => boolean) => seen.findIndex(predicate);
    const deltas = seen.filter((m) => m.method === "item/agentMessage/delta");
    const completed = seen.find(
      (m) => m.method === "item/completed" && (m.params!.item as Item).type === "agentMessage",
    );
    assert.ok(completed, "item/completed of the answer");
    const itemId = (completed.params!.item as Item).id;
    assert.ok(deltas.length > 0 && deltas.every((m) => m.params!.itemId === itemId));
    // Compared without printing 50 kB on a failure: where the texts part is what matters.
    const same = (what: string, got: string | undefined) =>
      assert.ok(
        got === text,
        `${what}: ${got?.length} of ${text.length} characters, first difference at ${firstDifference(got ?? "", text)}`,
      );
    same(`the text of the ${deltas.length} deltas`, deltas.map((m) => m.params!.delta).join(""));
    same("item/completed", (completed.params!.item as Item).payload.text);
    same(
      "turn/completed",
      (done.params!.turn as Turn).items.find((i) => i.type === "agentMessage")?.payload.text,
    );
    // The order the protocol promises: response < turn/started < deltas < item/completed < turn/completed.
    const response = at((m) => m.id !== undefined && m.method === undefined);
    const started = at((m) => m.method === "turn/started");
    assert.ok(response < started, "the turn/start response precedes turn/started");
    assert.ok(started < at((m) => m.method === "item/agentMessage/delta"));
    assert.ok(at((m) => m === deltas.at(-1)) < at((m) => m === completed));
    // thread/runtimeChanged (not an event of the turn) may follow it.
    const turnEvents = seen.filter((m) => /^(turn|item)\//.test(m.method ?? ""));
    assert.equal(turnEvents.at(-1), done, "turn/completed is the turn's last event");
  });
});

describe("a slow consumer", () => {
  test("never stalls the turn or the other client; it gets the final state or is closed with 1008", async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `word${i % 101}`).join(" ");
    bed.mock().reset([{ text }]);
    const server = bed.start({ args: ["--listen", "ws://127.0.0.1:0"], stdin: "ignore" });
    const url = await server.websocketUrl();
    const fast = bed.connect(url);
    const slow = bed.connect(url);
    await Promise.all([fast.opened, slow.opened]);
    await fast.initialize();
    await slow.initialize();
    const { thread } = await fast.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "test", userId: "me", workspacePath: server.workspace },
    });
    await slow.request("thread/subscribe", { threadId: thread.id });
    // The slow client stops reading its socket altogether.
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();

    await fast.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "talk" }] });
    const done = await fast.waitFor(
      (m) => m.method === "turn/completed",
      "turn/completed on the fast client",
    );
    const deltas = fast.notifications("item/agentMessage/delta", thread.id).map((m) => m.params!.delta);
    assert.equal(deltas.join(""), text, "the reading client gets every delta");
    const answer = (done.params!.turn as Turn).items.find((i) => i.type === "agentMessage")?.payload.text;
    assert.equal(answer, text);

    // The server still takes new clients while the slow one sits there.
    const late = bed.connect(url);
    await late.opened;
    assert.ok((await late.initialize()).result);

    socket.resume();
    const outcome = await Promise.race([
      slow
        .waitFor((m) => m.method === "turn/completed", "turn/completed on the slow client")
        .then((m) => ({ m })),
      slow.closed.then((closed) => ({ closed })),
    ]);
    if ("m" in outcome) {
      const final = (outcome.m.params!.turn as Turn).items.find((i) => i.type === "agentMessage")?.payload
        .text;
      assert.equal(final, text, "the final state is whole even when deltas were dropped");
    } else {
      assert.equal(outcome.closed.code, 1008);
    }
  });
});
