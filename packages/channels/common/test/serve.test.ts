/**
 * The channel plugin's process (src/serve.ts): a call about another channel kind never reaches
 * the channel — requests are refused with ChannelUnsupportedError, reply deltas are ignored. The
 * same refusal through a real plugin child is in the Slack plugin's test.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChannelUnsupportedError } from "nexo-plugin-sdk";
import { checkedFeatures } from "../src/serve.js";

test("every feature method checks the kind first; deltas for another kind are dropped", async () => {
  const calls: string[] = [];
  const features = checkedFeatures(
    {
      credentials: {
        validate: (params) => {
          calls.push(`validate ${params.kind}`);
          return { valid: true };
        },
        persist: async (params) => void calls.push(`persist ${params.kind}`),
      },
      pairing: {
        start: (params) => void calls.push(`pairing ${params.kind}`),
        cancel: (params) => void calls.push(`cancel ${params.kind}`),
      },
      replyStream: (params) => void calls.push(`delta ${params.kind}`),
    },
    "slack",
  );
  const ctx = {} as never;
  const credential = { kind: "slack", instance: null, payload: {}, metadata: {} };
  assert.deepEqual(await features.credentials?.validate?.(credential, ctx), { valid: true });
  await features.credentials?.persist?.(credential, ctx);
  await features.pairing?.start({ kind: "slack", challenge_id: "c1" } as never, ctx);
  features.replyStream?.({ kind: "slack", to: "C1", turn_id: "t", text: "a" } as never);
  assert.deepEqual(calls, ["validate slack", "persist slack", "pairing slack", "delta slack"]);

  const wrong = { ...credential, kind: "telegram" };
  assert.throws(() => features.credentials?.validate?.(wrong, ctx), ChannelUnsupportedError);
  assert.throws(
    () => features.credentials?.persist?.(wrong, ctx),
    /serves the "slack" channel, not "telegram"/,
  );
  assert.throws(
    () => features.pairing?.cancel({ kind: "email", challenge_id: "c1" } as never, ctx),
    ChannelUnsupportedError,
  );
  features.replyStream?.({ kind: "webchat", to: "C1", turn_id: "t", text: "a" } as never);
  assert.equal(calls.length, 4, "nothing about another kind reached the channel");
});
