/**
 * `nexo/dispatch` over a real daemon running the loopback channel plugin: the message goes out
 * through the plugin (read back from the channel's HTTP side), a channel nobody serves is
 * channel_unavailable, and the call is refused without dispatch_outbound.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";
import { EXAMPLE_PLUGINS } from "../../helpers/daemon-dir.js";
import { endpoint } from "../../helpers/loopback.js";

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
`;

describe("nexo/dispatch", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin(
      {
        "agents.yaml": AGENTS,
        "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
      },
      ["dispatch_outbound"],
    );
  });
  after(() => admin?.stop());

  it("is refused without dispatch_outbound", async () => {
    assertDenied(
      admin,
      await admin.viewer("nexo/dispatch", { channel: "loopback", to: "carol", body: "hi" }),
      "nexo/dispatch",
      "dispatch_outbound",
    );
  });

  it("sends through the channel plugin; the plugin's refusal reaches the microapp", async () => {
    const unknown = errorOf(
      await admin.ops("nexo/dispatch", { channel: "loopback", to: "nobody", body: "x" }),
      -33003,
    );
    assert.equal((unknown.data as { recipient: string }).recipient, "nobody");

    // carol is listening (a long poll), so the loopback channel knows her.
    const url = await endpoint(admin.env.stateDir);
    const listening = fetch(`${url}/messages?to=carol&timeout=20000`);
    let reply = await admin.ops("nexo/dispatch", {
      channel: "loopback",
      to: "carol",
      body: "your order shipped",
    });
    for (let i = 0; i < 50 && reply.error?.code === -33003; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reply = await admin.ops("nexo/dispatch", {
        channel: "loopback",
        to: "carol",
        body: "your order shipped",
      });
    }
    const { msg_id } = resultOf<{ msg_id: string }>(reply);
    assert.ok(msg_id.length > 0);
    const res = await listening;
    const { messages } = (await res.json()) as { messages: Array<{ text: string }> };
    assert.deepEqual(
      messages.map((m) => m.text),
      ["your order shipped"],
    );
  });

  it("a channel no plugin serves is channel_unavailable; bad params are -32602", async () => {
    const unavailable = errorOf(
      await admin.ops("nexo/dispatch", { channel: "whatsapp", to: "x", body: "y" }),
      -32603,
    );
    assert.match(unavailable.message, /^channel_unavailable: /);
    assert.deepEqual(unavailable.data, { reason: "channel_unavailable", channel: "whatsapp" });
    errorOf(await admin.ops("nexo/dispatch", { channel: "loopback", body: "no recipient" }), -32602);
  });
});
