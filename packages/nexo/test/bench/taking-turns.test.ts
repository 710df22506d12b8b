/**
 * bench/providers.bench.ts's `takingTurns`: the two providers' long answers in interleave()'s
 * rounds, with who goes first alternating round by round, each sample handed to its own slot.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { interleave } from "../../../../bench/lib.js";
import { takingTurns } from "../../../../bench/providers.bench.js";

describe("takingTurns", () => {
  it("alternates who goes first each round and hands each contender its own samples", async () => {
    const order: string[] = [];
    let aCalls = 0;
    let bCalls = 0;
    const turns = takingTurns(
      async () => {
        order.push("a");
        return 100 + aCalls++;
      },
      async () => {
        order.push("b");
        return 200 + bCalls++;
      },
    );
    const samples = await interleave(4, { a: turns.a, b: turns.b, other: async () => 0 });
    assert.deepEqual(order, ["a", "b", "b", "a", "a", "b", "b", "a"]);
    assert.deepEqual(samples.a, [100, 101, 102, 103]);
    assert.deepEqual(samples.b, [200, 201, 202, 203]);
  });

  it("refuses b's slot before a's has run the round", async () => {
    const turns = takingTurns(
      async () => 1,
      async () => 2,
    );
    await assert.rejects(turns.b(), /b's slot came before a's/);
  });
});
