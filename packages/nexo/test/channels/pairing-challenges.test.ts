/**
 * The pairing challenge store's own rules, with a provider scripted in-process (the end-to-end
 * path through a real plugin is test/admin/domains/pairing.test.ts): changes reported before the
 * start reply are told after it, a provider that never reports cannot hold a challenge open (the
 * backup expiry tells the provider), a failed start leaves nothing, ended challenges do not change.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { admin, plugin } from "@nexo/wire/schemas";
import type { ChannelPairing } from "../../src/channels/features.js";
import { PairingChallenges } from "../../src/channels/pairing.js";

class ScriptedProvider implements ChannelPairing {
  readonly cancelled: string[] = [];
  private listener: ((update: plugin.ChannelPairingUpdateParams) => void) | undefined;
  constructor(private readonly onStart: (id: string, report: ScriptedProvider["report"]) => unknown) {}
  report = (update: plugin.ChannelPairingUpdateParams) => this.listener?.(update);
  async start(params: { challenge_id: string }) {
    await this.onStart(params.challenge_id, this.report);
    return { instructions: "scan" };
  }
  async cancel(id: string) {
    this.cancelled.push(id);
  }
  onUpdate(listener: (update: plugin.ChannelPairingUpdateParams) => void) {
    this.listener = listener;
    return () => {
      this.listener = undefined;
    };
  }
}

function store(provider: ChannelPairing, options: { ttlMs?: number; graceMs?: number } = {}) {
  const told: admin.PairingStatus[] = [];
  const challenges = new PairingChallenges({
    pairingOf: () => provider,
    onChange: (status) => told.push(status),
    ...options,
  });
  return { challenges, told };
}

describe("PairingChallenges", () => {
  it("tells a change the provider reported during start only after start resolved", async () => {
    const provider = new ScriptedProvider((id, report) => report({ challenge_id: id, state: "qr_ready" }));
    const { challenges, told } = store(provider);
    const started = await challenges.start({ agentId: "ana", channel: "wa" });
    assert.deepEqual(told, [], "nothing before the reply");
    assert.equal(challenges.status(started.challenge_id)?.state, "qr_ready");
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(told, [{ challenge_id: started.challenge_id, state: "qr_ready", channel: "wa" }]);
  });

  it("expires a challenge whose provider never reports, and tells the provider", async () => {
    const provider = new ScriptedProvider(() => {});
    const { challenges, told } = store(provider, { ttlMs: 50, graceMs: 20 });
    const { challenge_id } = await challenges.start({ agentId: "ana", channel: "wa" });
    for (let i = 0; i < 200 && told.length === 0; i++) await sleep(10);
    assert.equal(told[0]?.state, "expired");
    assert.deepEqual(provider.cancelled, [challenge_id]);
    // A late report changes nothing.
    provider.report({ challenge_id, state: "linked", data: { device_jid: "x" } });
    assert.equal(challenges.status(challenge_id)?.state, "expired");
    assert.equal(told.length, 1);
  });

  it("a start the provider refuses leaves no challenge; other challenges' updates are ignored", async () => {
    const refusing = new ScriptedProvider(() => {
      throw new Error("not started");
    });
    const { challenges, told } = store(refusing);
    await assert.rejects(challenges.start({ agentId: "ana", channel: "wa" }), /not started/);
    const ok = new ScriptedProvider(() => {});
    const second = store(ok);
    const { challenge_id } = await second.challenges.start({ agentId: "ana", channel: "wa", instance: "i1" });
    ok.report({ challenge_id: "someone-else", state: "linked" });
    ok.report({ challenge_id, state: "linked", data: { device_jid: "d@x" } });
    assert.deepEqual(second.challenges.status(challenge_id), {
      challenge_id,
      state: "linked",
      channel: "wa",
      instance: "i1",
      data: { device_jid: "d@x" },
    });
    assert.equal(second.challenges.cancel(challenge_id), false, "ended: cancel changes nothing");
    assert.deepEqual(ok.cancelled, []);
    assert.deepEqual(told, []);
  });
});
