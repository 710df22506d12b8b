/**
 * A slow consumer through the real `nexo app-server` over WebSocket: a subscriber that stops
 * reading never stalls the turn or the client that started it (which gets every delta), and once it
 * reads again it either has the turn's final state (its deltas may have been dropped) or was closed
 * with 1008 — the outbox's overflow policy (outbox.ts). The server keeps taking new clients.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { appServerTestbed } from "../../helpers/appserver-client.js";

const bed = appServerTestbed();

type Turn = { items: Array<{ type: string; payload: { text?: string } }> };

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
