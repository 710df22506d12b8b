/**
 * Linking a phone the way an operator does: the admin RPC's `pairing/start|status|cancel` called
 * by a microapp holding `pairing_initiate`, through a daemon running the compiled WhatsApp plugin
 * (FakeWhatsApp behind its transport seam). By phone number first: bad numbers refused (-32602),
 * the pairing code read back, cancelled, expired, then typed on the phone and linked, the audit
 * row's hash taken without the number. Then (the phone logged the device out) by QR: the code
 * read back as text and PNG, the phone's scan, the challenge linked with the device's JID — then
 * `whatsapp/bot/list|send` served by the plugin for the agent bound to the channel.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { argsHash } from "../../../nexo/src/admin/index.js";
import { MICROAPPS_DIR } from "../../../nexo/test/fixtures/microapps/harness.js";
import { type DaemonDir, startFromDir } from "../../../nexo/test/helpers/daemon-dir.js";
import { call, ok } from "../../../nexo/test/helpers/takeover.js";
import { FakeWhatsApp } from "./fake-whatsapp.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const SOCKET_MODULE = fileURLToPath(new URL("./fake-socket.ts", import.meta.url));
const ACCOUNT = "447700900001:9@s.whatsapp.net";
const BY_NUMBER = "447700900002:4@s.whatsapp.net";

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

  const startByNumber = async (phone_number: string) =>
    String(
      ok(await admin("nexo/admin/pairing/start", { agent_id: "ana", channel: "whatsapp", phone_number }))
        .challenge_id,
    );
  /** awaiting_user with a pairing code (the socket's first QR code is the cue to ask for one). */
  const codeShown = async (challenge: string, qr: string) => {
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr(qr);
    const status = await statusUntil(challenge, "awaiting_user");
    const code = (status.data as { pairing_code?: string } | undefined)?.pairing_code;
    assert.match(String(code), /^[0-9A-Z]{8}$/);
    return String(code);
  };

  test("pairing/start refuses a phone number that is not E.164, without echoing it", async () => {
    for (const bad of [
      "+44 7700 900002",
      "07700900002",
      "+0447700900002",
      "123456",
      "4477009000021234",
      "call me",
    ]) {
      const frame = await admin("nexo/admin/pairing/start", {
        agent_id: "ana",
        channel: "whatsapp",
        phone_number: bad,
      });
      assert.equal(frame.error?.code, -32602, `${bad}: ${JSON.stringify(frame)}`);
      assert.match(frame.error!.message, /E\.164/);
      assert.ok(!JSON.stringify(frame.error).includes(bad), `the error does not repeat "${bad}"`);
    }
    assert.equal(fake.codeRequests().length, 0, "no code was asked for");
  });

  test("by phone number: the code is read back, cancel ends it, a code not entered in time expires", async () => {
    const cancelled = await startByNumber("+447700900002");
    await codeShown(cancelled, "2@number-ref-1,key,key,adv");
    assert.equal(fake.codeRequests().at(-1)?.phoneNumber, "447700900002", "Baileys gets digits only");
    assert.deepEqual(ok(await admin("nexo/admin/pairing/cancel", { challenge_id: cancelled })), {
      cancelled: true,
    });
    const ended = await statusUntil(cancelled, "cancelled");
    assert.deepEqual(ended.data, { error: "cancelled by the operator" }, "the code is gone with it");
    await fake.until("the socket closed", () => (fake.connected ? undefined : true));

    const expired = await startByNumber("447700900002");
    await codeShown(expired, "2@number-ref-2,key,key,adv");
    fake.qrTimeout();
    const status = await statusUntil(expired, "expired");
    assert.match(String((status.data as { error?: string }).error), /pairing code was not entered in time/);
    assert.equal(
      (status.data as { pairing_code?: string }).pairing_code,
      undefined,
      "an ended challenge shows no code",
    );
  });

  test("by phone number: the phone types the code → linked; the audit hash has no number", async () => {
    const challenge = await startByNumber("+447700900002");
    const code = await codeShown(challenge, "2@number-ref-3,key,key,adv");
    assert.equal(fake.enterCode("WRONG123", BY_NUMBER), false, "a wrong code is refused on the phone");
    assert.equal(fake.enterCode(code, BY_NUMBER), true);
    const linked = await statusUntil(challenge, "linked");
    assert.deepEqual(linked.data, { device_jid: BY_NUMBER });

    // Every start with a number hashed as if the number were blank: the hash says nothing about it.
    const starts = run!.daemon.store.audit
      .tail({ limit: 50, method: "nexo/admin/pairing/start" })
      .entries.filter((row) => row.result === "ok");
    assert.equal(starts.length, 3);
    const blanked = (n: string) =>
      argsHash("nexo/admin/pairing/start", { agent_id: "ana", channel: "whatsapp", phone_number: n });
    assert.equal(blanked("+447700900002"), blanked("447700900002"));
    for (const row of starts) assert.equal(row.args_hash, blanked("anything"));

    // The phone removes the device: the QR pairing below starts from an unlinked channel.
    fake.logOut(BY_NUMBER);
    await fake.until("the socket closed", () => (fake.connected ? undefined : true));
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
