/**
 * bench/lib.ts's `alternateCalls`, the engine benchmark's estimator of engine/bare time: the two
 * contenders take turns call by call, who goes first alternates, every round has as many calls of
 * each, and a round's ratio is the two contenders' time per call in that round.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { alternateCalls } from "../../../../bench/lib.js";

/** Holds the thread for `ms`. */
function spin(ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
  return Promise.resolve();
}

describe("alternateCalls", () => {
  it("takes turns call by call, alternating who goes first, with as many calls of each", async () => {
    const order: string[] = [];
    // One round, so that every pair below belongs to it (the pattern holds whatever the count).
    const rounds = await alternateCalls(
      1,
      5,
      async () => {
        order.push("a");
        await spin(0.05);
      },
      async () => {
        order.push("b");
        await spin(0.05);
      },
    );
    assert.equal(rounds.ratios.length, 1);
    assert.ok(order.length >= 2 && order.length % 2 === 0, order.join(""));
    // Pairs: a b, then b a, then a b …
    for (let i = 0; i < order.length; i += 2) {
      assert.equal(
        `${order[i]}${order[i + 1]}`,
        i % 4 === 0 ? "ab" : "ba",
        `pair ${i / 2}: ${order.join("")}`,
      );
    }
  });

  it("gives one ratio per round, its time per call of a over b's, each round at least one pair", async () => {
    let calls = 0;
    const count = async () => {
      calls++;
      await spin(0.01);
    };
    const rounds = await alternateCalls(3, 0, count, count);
    assert.equal(calls, 6);
    assert.equal(rounds.ratios.length, 3);
    assert.equal(rounds.aMs.length, 3);
    assert.equal(rounds.bMs.length, 3);
    for (let r = 0; r < 3; r++) {
      const perCall = rounds.aMs[r]! / rounds.bMs[r]!;
      assert.ok(Math.abs(rounds.ratios[r]! - perCall) < 1e-9 * perCall, `${rounds.ratios[r]} vs ${perCall}`);
    }
  });
});
