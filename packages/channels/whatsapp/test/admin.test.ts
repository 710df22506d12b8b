/**
 * Linking a phone the way an operator does: the admin RPC's `pairing/start|status` called by a
 * microapp holding `pairing_initiate`, through a daemon running the compiled WhatsApp plugin
 * (FakeWhatsApp behind its transport seam) — the QR code read back as text and PNG, the phone's
 * scan, the challenge linked with the device's JID — then `whatsapp/bot/list|send` served by the
 * plugin for the agent bound to the channel.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MICROAPPS_DIR } from "../../../nexo/test/fixtures/microapps/harness.js";
import { type DaemonDir, startFromDir } from "../../../nexo/test/helpers/daemon-dir.js";
import { call, ok } from "../../../nexo/test/helpers/takeover.js";
import { FakeWhatsApp } from "./fake-whatsapp.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const SOCKET_MODULE = fileURLToPath(new URL("./fake-socket.ts", import.meta.url));
const ACCOUNT = "447700900001:9@s.whatsapp.net";

describe("whatsapp pairing and bots through the admin RPC", () => {
  const fake = new FakeWhatsApp();
  let run: DaemonDir | undefined;
  const admin = (method: string, params: Record<string, unknown>) => call(run!, "ops", method, params);
  /** pairing/status until `state`, or fails after a generous wait (the machine is loaded). */
  const statusUntil = async (challenge: string, state: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const status = ok(await admin("nexo/admin/pairing/status", { challenge_id: challenge }));
      if (status.state === state) return status;
      if (Date.now() > deadline) assert.fail(`pairing never reached ${state}: ${JSON.stringify(status)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  before(async () => {
    await fake.start();
    run = await startFromDir({
      "agents.yaml": `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: whatsapp }]
`,
      "plugins.yaml": `plugins:
  - dir: ${PLUGIN_DIR}
    env:
      NODE_OPTIONS: "--import tsx"
      WHATSAPP_SOCKET_MODULE: ${SOCKET_MODULE}
      WHATSAPP_FAKE_ADDRESS: ${fake.address}
      WHATSAPP_ALLOWED_NUMBERS: "*"
`,
      "extensions.yaml": `extensions:
  entries:
    ops:
      path: ${join(MICROAPPS_DIR, "probe/main.mjs")}
      capabilities_grant: [audit_read, pairing_initiate, channels_crud]
      config: { daemon_timeout_ms: 60000 }
`,
    });
  });
  after(async () => {
    await run?.daemon.stop("test over");
    await fake.stop();
  });

  test("pairing/start → qr_ready (text and PNG) → the phone scans → linked with the device's JID", async () => {
    const started = ok(await admin("nexo/admin/pairing/start", { agent_id: "ana", channel: "whatsapp" }));
    const challenge = String(started.challenge_id);
    assert.match(String(started.instructions), /Linked devices/);
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr("2@admin-ref,key,key,adv");
    const qr = await statusUntil(challenge, "qr_ready");
    const data = qr.data as { qr_ascii: string; qr_png_base64: string };
    assert.ok(data.qr_ascii.length > 100);
    assert.equal(Buffer.from(data.qr_png_base64, "base64").subarray(1, 4).toString(), "PNG");
    fake.scan(ACCOUNT);
    const linked = await statusUntil(challenge, "linked");
    assert.deepEqual(linked.data, { device_jid: ACCOUNT });
    assert.equal(linked.channel, "whatsapp");
  });

  test("whatsapp/bot/list and bot/send go to the linked account", async () => {
    const listed = ok(await admin("nexo/admin/whatsapp/bot/list", { agent_id: "ana" }));
    assert.deepEqual(listed.bots, [{ jid: "867051314767696@bot", persona_id: "meta-ai" }]);
    const sent = ok(
      await admin("nexo/admin/whatsapp/bot/send", {
        agent_id: "ana",
        bot_jid: "867051314767696@bot",
        text: "hello bot",
      }),
    );
    assert.match(String(sent.msg_id), /^SENT\d+$/);
    assert.ok(
      fake.sent("867051314767696@bot").some((c) => (c.args[1] as { text: string }).text === "hello bot"),
    );
  });
});
