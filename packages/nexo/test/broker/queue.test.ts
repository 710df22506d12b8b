import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DeliveryQueue } from "../../src/broker/queue.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("DeliveryQueue", () => {
  it("refuses a depth that is not a positive integer", () => {
    for (const depth of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(
        () => new DeliveryQueue<number>({ depth, deliver: () => {}, onDeliveryError: () => {} }),
        RangeError,
      );
    }
  });

  it("delivers in FIFO order, one at a time, never inside offer", async () => {
    const seen: number[] = [];
    let running = 0;
    let maxRunning = 0;
    const queue = new DeliveryQueue<number>({
      depth: 100,
      deliver: async (n) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((resolve) => setTimeout(resolve, n % 3));
        seen.push(n);
        running--;
      },
      onDeliveryError: () => assert.fail("no errors expected"),
    });
    for (let n = 0; n < 50; n++) assert.equal(queue.offer(n), true);
    assert.deepEqual(seen, [], "offer must not deliver synchronously");
    assert.equal(await queue.whenIdle(5000), true);
    assert.deepEqual(
      seen,
      Array.from({ length: 50 }, (_, n) => n),
    );
    assert.equal(maxRunning, 1);
    assert.equal(queue.delivered, 50);
    assert.equal(queue.idle, true);
  });

  it("holds at most `depth` waiting items while one is in flight, dropping and counting the rest", async () => {
    const gate = deferred();
    const seen: number[] = [];
    const drops: [number, number][] = [];
    const queue = new DeliveryQueue<number>({
      depth: 3,
      deliver: async (n) => {
        if (n === 0) await gate.promise;
        seen.push(n);
      },
      onDeliveryError: () => {},
      onDrop: (n, dropped) => drops.push([n, dropped]),
    });
    queue.offer(0);
    await tick();
    // 0 is in flight; 1..3 wait; 4 and 5 find the queue full.
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((n) => queue.offer(n)),
      [true, true, true, false, false],
    );
    assert.equal(queue.size, 3);
    assert.equal(queue.dropped, 2);
    assert.deepEqual(drops, [
      [4, 1],
      [5, 2],
    ]);
    gate.resolve();
    await queue.whenIdle(1000);
    assert.deepEqual(seen, [0, 1, 2, 3], "what was queued keeps its order; drops leave a gap");
    assert.equal(queue.offer(6), true, "room again once drained");
    await queue.whenIdle(1000);
    assert.deepEqual(seen, [0, 1, 2, 3, 6]);
  });

  it("reports a throwing or rejecting consumer and goes on with the next item", async () => {
    const seen: number[] = [];
    const errors: [string, number][] = [];
    const queue = new DeliveryQueue<number>({
      depth: 10,
      deliver: async (n) => {
        if (n === 1) throw new Error("sync-ish boom");
        if (n === 2) await Promise.reject(new Error("async boom"));
        seen.push(n);
      },
      onDeliveryError: (error, n) => {
        errors.push([(error as Error).message, n]);
        if (n === 2) throw new Error("a throwing error callback must not stop the loop");
      },
    });
    for (const n of [0, 1, 2, 3]) queue.offer(n);
    await queue.whenIdle(1000);
    assert.deepEqual(seen, [0, 3]);
    assert.deepEqual(errors, [
      ["sync-ish boom", 1],
      ["async boom", 2],
    ]);
    assert.equal(queue.failed, 2);
    assert.equal(queue.delivered, 4);
  });

  it("handles a synchronous consumer that throws", async () => {
    const errors: unknown[] = [];
    const queue = new DeliveryQueue<number>({
      depth: 10,
      deliver: (n) => {
        if (n === 0) throw new TypeError("sync");
      },
      onDeliveryError: (error) => errors.push(error),
    });
    queue.offer(0);
    queue.offer(1);
    await queue.whenIdle(1000);
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof TypeError);
    assert.equal(queue.delivered, 2);
  });

  it("stop discards what waits, delivers nothing more and ignores later offers", async () => {
    const gate = deferred();
    const seen: number[] = [];
    const queue = new DeliveryQueue<number>({
      depth: 10,
      deliver: async (n) => {
        if (n === 0) await gate.promise;
        seen.push(n);
      },
      onDeliveryError: () => {},
    });
    queue.offer(0);
    queue.offer(1);
    queue.offer(2);
    await tick();
    queue.stop();
    assert.equal(queue.size, 0);
    assert.equal(queue.offer(3), false);
    assert.equal(queue.dropped, 0, "offers after stop are not drops");
    assert.equal(await queue.whenIdle(20), false, "the in-flight delivery still runs");
    gate.resolve();
    assert.equal(await queue.whenIdle(1000), true);
    assert.deepEqual(seen, [0]);
  });

  it("whenIdle gives up after its timeout", async () => {
    const gate = deferred();
    const queue = new DeliveryQueue<number>({
      depth: 1,
      deliver: () => gate.promise,
      onDeliveryError: () => {},
    });
    queue.offer(1);
    const started = Date.now();
    assert.equal(await queue.whenIdle(30), false);
    assert.ok(Date.now() - started >= 25);
    gate.resolve();
    assert.equal(await queue.whenIdle(1000), true);
  });

  it("calls onIdle each time the loop empties the queue", async () => {
    let idles = 0;
    const queue = new DeliveryQueue<number>({
      depth: 10,
      deliver: () => {},
      onDeliveryError: () => {},
      onIdle: () => idles++,
    });
    queue.offer(1);
    queue.offer(2);
    await queue.whenIdle(1000);
    assert.equal(idles, 1);
    queue.offer(3);
    await queue.whenIdle(1000);
    assert.equal(idles, 2);
  });

  it("lets timers run while a synchronous consumer works through a long queue", async () => {
    const order: string[] = [];
    const queue = new DeliveryQueue<number>({
      depth: 5000,
      deliver: (n) => {
        if (n === 0 || n === 4999) order.push(`item ${n}`);
      },
      onDeliveryError: () => {},
    });
    for (let n = 0; n < 5000; n++) queue.offer(n);
    setImmediate(() => order.push("event loop turn"));
    await queue.whenIdle(5000);
    assert.deepEqual(order, ["item 0", "event loop turn", "item 4999"]);
  });

  it("keeps order across the internal compaction of a large queue", async () => {
    const seen: number[] = [];
    const gate = deferred();
    const queue = new DeliveryQueue<number>({
      depth: 10_000,
      deliver: async (n) => {
        if (n === 0) await gate.promise;
        seen.push(n);
      },
      onDeliveryError: () => {},
    });
    for (let n = 0; n < 6000; n++) queue.offer(n);
    gate.resolve();
    // Offer more while the loop is consuming, so pushes interleave with compactions.
    for (let n = 6000; n < 9000; n++) {
      queue.offer(n);
      if (n % 500 === 0) await tick();
    }
    await queue.whenIdle(5000);
    assert.deepEqual(
      seen,
      Array.from({ length: 9000 }, (_, n) => n),
    );
  });
});
