/**
 * The outbox's policy on its own, over a real line transport whose output is a real Node stream the
 * test reads when it chooses: while the stream pushes back, deltas of one item merge (same text,
 * same order) and nothing else is merged or dropped; a reader that drains gets everything in the
 * order it was sent; too much waiting, or too long without progress, closes with a reason.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { LineTransport, type TransportSink } from "@nexo/wire";
import { Outbox } from "../../../src/doors/appserver/outbox.js";

const sink: TransportSink = { message: () => undefined, problem: () => undefined, closed: () => undefined };

/** An outbox over a line transport into a stream with a small buffer that nobody reads yet. */
function rig(options: { coalesceFrom?: number; closeLimit?: number; stallMs?: number } = {}) {
  const input = new PassThrough();
  const output = new PassThrough({ highWaterMark: 256 });
  const overflows: string[] = [];
  // As the host does: an overflow closes the connection.
  const outbox: Outbox = new Outbox(new LineTransport({ input, output }), {
    ...options,
    stream: output,
    onOverflow: (reason) => {
      overflows.push(reason);
      outbox.close(reason);
    },
  });
  outbox.start(sink);
  /** Reads everything the stream will give until `count` messages have arrived. */
  const read = async (count: number) => {
    const lines: Array<{ method?: string; id?: number; params?: Record<string, unknown> }> = [];
    let rest = "";
    for await (const chunk of output) {
      rest += String(chunk);
      const parts = rest.split("\n");
      rest = parts.pop()!;
      for (const part of parts) lines.push(JSON.parse(part));
      if (lines.length >= count) break;
    }
    return lines;
  };
  return { outbox, output, overflows, read };
}

const delta = (itemId: string, text: string) => ({
  jsonrpc: "2.0",
  method: "item/agentMessage/delta",
  params: { threadId: "t", turnId: "u", itemId, deltaKind: "agentMessage", delta: text },
});

describe("the AppServer outbox", () => {
  test("under pressure, same-item deltas merge; other messages keep their place; nothing is lost", async () => {
    const { outbox, read } = rig({ coalesceFrom: 4 });
    const sent: Array<Promise<void>> = [];
    const words: string[] = [];
    // Far more than the stream's buffer, all in one tick: most of it waits in the outbox.
    for (let i = 0; i < 400; i++) {
      words.push(`a${i} `);
      sent.push(outbox.send(delta("item_a", `a${i} `)));
      if (i === 200) sent.push(outbox.send({ jsonrpc: "2.0", id: 7, result: { ok: true } }));
    }
    for (let i = 0; i < 50; i++) sent.push(outbox.send(delta("item_b", `b${i} `)));
    sent.push(outbox.send({ jsonrpc: "2.0", method: "item/completed", params: { itemId: "item_b" } }));
    assert.ok(outbox.coalescedDeltas > 0, "deltas merged while the stream pushed back");
    const expected = 400 + 1 + 50 + 1 - outbox.coalescedDeltas;
    const lines = await read(expected);
    await Promise.all(sent);
    assert.equal(lines.length, expected);
    const a = lines.filter((l) => l.params?.itemId === "item_a").map((l) => l.params!.delta);
    assert.equal(a.join(""), words.join(""));
    const b = lines.filter((l) => l.params?.itemId === "item_b" && l.method?.endsWith("delta"));
    assert.equal(
      b.map((l) => l.params!.delta).join(""),
      Array.from({ length: 50 }, (_, i) => `b${i} `).join(""),
    );
    const reply = lines.findIndex((l) => l.id === 7);
    // The reply sits between the deltas sent before and after it.
    const before = lines.slice(0, reply).filter((l) => l.params?.itemId === "item_a");
    assert.ok(
      before
        .map((l) => l.params!.delta)
        .join("")
        .endsWith("a200 "),
    );
    assert.equal(lines.at(-1)?.method, "item/completed");
  });

  test("a merged delta is a copy: the params object the caller passed is never changed", async () => {
    const { outbox, read } = rig({ coalesceFrom: 1 });
    const shared = Array.from({ length: 300 }, (_, i) => delta("item_a", `x${i} `));
    for (const frame of shared) void outbox.send(frame);
    await read(300 - outbox.coalescedDeltas);
    assert.ok(shared.every((frame, i) => frame.params.delta === `x${i} `));
  });

  test("past the close limit the client is taken as not reading, with the reason", async () => {
    const { outbox, overflows } = rig({ coalesceFrom: 1, closeLimit: 10 });
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        outbox.send({ jsonrpc: "2.0", method: "item/completed", params: { n: i } }),
      ),
    );
    assert.equal(overflows.length, 1, "one overflow, however many sends follow");
    assert.match(overflows[0]!, /slow consumer: 10 messages waiting .* \(limit 10\)/);
    assert.ok(results.some((r) => r.status === "rejected"));
  });

  test("a stream that takes nothing for stallMs closes the connection; one that drains does not", async () => {
    const { outbox, overflows } = rig({ stallMs: 300 });
    for (let i = 0; i < 100; i++)
      outbox.send({ jsonrpc: "2.0", method: "turn/started", params: { i } }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(overflows.length, 1);
    assert.match(overflows[0]!, /has read nothing for [\d.]+ s while \d+ messages wait/);

    const fresh = rig({ stallMs: 60_000 });
    for (let i = 0; i < 100; i++)
      void fresh.outbox.send({ jsonrpc: "2.0", method: "turn/started", params: { i } });
    assert.equal((await fresh.read(100)).length, 100);
    assert.equal(fresh.overflows.length, 0);
    assert.equal(fresh.outbox.queuedMessages, 0);
  });

  test("close fails what waits with ConnectionClosedError and refuses later sends", async () => {
    const { outbox } = rig();
    const sends = Array.from({ length: 100 }, () => outbox.send({ jsonrpc: "2.0", method: "turn/started" }));
    outbox.close("bye");
    const settled = await Promise.allSettled(sends);
    assert.ok(settled.some((r) => r.status === "rejected" && /bye/.test(String(r.reason))));
    await assert.rejects(outbox.send({ jsonrpc: "2.0", method: "x" }), /bye/);
  });
});
