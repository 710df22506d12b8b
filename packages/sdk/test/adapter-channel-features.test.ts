/**
 * nexo's optional channel features in the SDK: advertised in the initialize reply only for the
 * handlers given (a plugin without them replies exactly as before and answers -32601), served with
 * their shapes checked, and `broker.pairingUpdate` reaching the host as `channel.pairing.update`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MethodNotFoundError } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { ScriptedHost } from "./helpers/scripted-host.js";

describe("channel features of an SDK plugin that implements them", () => {
  let host: ScriptedHost;
  const updates: unknown[] = [];
  before(() => {
    host = new ScriptedHost("demo-plugin.ts");
    host.peer.onNotification("channel.pairing.update", (params) => {
      updates.push(params);
    });
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  test("the initialize reply advertises them", async () => {
    const result = plugin.InitializeResultSchema.parse(
      await host.peer.request("initialize", { nexo_version: "0.1.5" }),
    );
    assert.deepEqual(result.channel_features, ["pairing", "bots", "credentials"]);
  });

  test("pairing: start answers, then the state change arrives as a notification", async () => {
    const reply = await host.peer.request("channel.pairing.start", {
      kind: "loopback",
      instance: null,
      challenge_id: "c-1",
      agent_id: "ana",
      expires_at_ms: Date.now() + 60_000,
    });
    assert.deepEqual(reply, { instructions: "scan it" });
    for (let i = 0; i < 100 && updates.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(updates, [{ challenge_id: "c-1", state: "qr_ready", data: { qr_ascii: "QR for ana" } }]);
    assert.deepEqual(
      await host.peer.request("channel.pairing.cancel", { kind: "loopback", challenge_id: "c-1" }),
      {
        ok: true,
      },
    );
  });

  test("bots and the persister's validate are served; a persister method left out is -32601", async () => {
    assert.deepEqual(await host.peer.request("channel.bots.list", { kind: "loopback", agent_id: "ana" }), {
      bots: [{ jid: "ana@bot", persona_id: "demo" }],
    });
    assert.deepEqual(
      await host.peer.request("channel.bots.send", {
        kind: "loopback",
        agent_id: "ana",
        bot_jid: "x@bot",
        text: "hi",
      }),
      { message_id: "bot-x@bot" },
    );
    const credential = { kind: "loopback", instance: null, metadata: {} };
    assert.deepEqual(
      await host.peer.request("channel.credentials.validate", { ...credential, payload: {} }),
      { valid: false, reason_code: "invalid_payload", detail: "token missing" },
    );
    await assert.rejects(
      host.peer.request("channel.credentials.probe", { ...credential, payload: { token: "t" } }),
      MethodNotFoundError,
    );
  });
});

describe("a plugin without channel features", () => {
  test("replies to initialize without channel_features and answers their methods -32601", async () => {
    const host = new ScriptedHost("bare-plugin.ts");
    try {
      const result = (await host.peer.request("initialize", {})) as Record<string, unknown>;
      assert.ok(!("channel_features" in result), JSON.stringify(result));
      await assert.rejects(
        host.peer.request("channel.bots.list", { kind: "loopback", agent_id: "ana" }),
        MethodNotFoundError,
      );
    } finally {
      await host.dispose();
    }
  });
});
