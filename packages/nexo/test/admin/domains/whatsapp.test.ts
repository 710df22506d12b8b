/**
 * `nexo/admin/whatsapp/bot/*` over a real daemon: through the loopback plugin, which offers bots
 * (LOOPBACK_BOTS), the list is the plugin's and a message reaches the bot's contact on the
 * channel's HTTP side; an agent whose channel has no bots (the kitchen fixture) or no channel at
 * all is channel_unavailable; both methods refused and audited without channels_crud.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";
import { endpoint, loopbackAndKitchenPlugins } from "../../helpers/loopback.js";

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: kitchen_chat }, { plugin: loopback }]
  - id: kim
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: kitchen_chat, instance: k1 }]
  - id: lone
    model: { provider: scripted, model: nexo-scripted-demo }
`;

describe("admin whatsapp/bot/* through a channel plugin offering bots", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin(
      {
        "agents.yaml": AGENTS,
        "plugins.yaml": loopbackAndKitchenPlugins({ LOOPBACK_BOTS: "helper@bot=meta_helper,echo@bot=echo" }),
      },
      ["channels_crud"],
    );
  });
  after(() => admin?.stop());

  it("are refused without channels_crud, each refusal audited", async () => {
    for (const [method, params] of [
      ["nexo/admin/whatsapp/bot/list", { agent_id: "ana" }],
      ["nexo/admin/whatsapp/bot/send", { agent_id: "ana", bot_jid: "echo@bot", text: "hi" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "channels_crud");
    }
  });

  it("list: the bots of the agent's first channel that offers them (kitchen has none; loopback has)", async () => {
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/whatsapp/bot/list", { agent_id: "ana" })), {
      agent_id: "ana",
      bots: [
        { jid: "helper@bot", persona_id: "meta_helper" },
        { jid: "echo@bot", persona_id: "echo" },
      ],
    });
    const row = admin.rig.store.audit.tail({ microappId: "ops", limit: 1 }).entries[0];
    assert.equal(row?.method, "nexo/admin/whatsapp/bot/list");
    assert.equal(row?.result, "ok");
  });

  it("send: the message reaches the bot on the channel; an unknown bot is the plugin's -33003", async () => {
    const { msg_id } = resultOf<{ msg_id: string }>(
      await admin.ops("nexo/admin/whatsapp/bot/send", {
        agent_id: "ana",
        bot_jid: "helper@bot",
        text: "what is on my calendar?",
      }),
    );
    const url = await endpoint(admin.env.stateDir);
    const res = await fetch(`${url}/messages?to=helper@bot&timeout=0`);
    const { messages } = (await res.json()) as { messages: Array<{ message_id: string; text: string }> };
    assert.deepEqual(messages, [
      { ...messages[0], message_id: msg_id, to: "helper@bot", kind: "text", text: "what is on my calendar?" },
    ]);
    const unknown = errorOf(
      await admin.ops("nexo/admin/whatsapp/bot/send", { agent_id: "ana", bot_jid: "ghost@bot", text: "x" }),
      -33003,
    );
    assert.equal(unknown.data?.recipient, "ghost@bot");
    errorOf(
      await admin.ops("nexo/admin/whatsapp/bot/send", { agent_id: "ana", bot_jid: "not-a-bot", text: "x" }),
      -32602,
    );
  });

  it("an agent none of whose channels offers bots is channel_unavailable; an unknown one not_found", async () => {
    for (const [agent_id, channel] of [
      ["kim", "kitchen_chat"],
      ["lone", "whatsapp"],
    ] as const) {
      for (const [method, params] of [
        ["nexo/admin/whatsapp/bot/list", { agent_id }],
        ["nexo/admin/whatsapp/bot/send", { agent_id, bot_jid: "echo@bot", text: "x" }],
      ] as const) {
        const error = errorOf(await admin.ops(method, params), -32603);
        assert.match(error.message, /^channel_unavailable: /);
        assert.deepEqual(error.data, { reason: "channel_unavailable", channel, feature: "bots" });
      }
    }
    const missing = errorOf(await admin.ops("nexo/admin/whatsapp/bot/list", { agent_id: "nobody" }), -32603);
    assert.equal(missing.data?.reason, "not_found");
  });
});
