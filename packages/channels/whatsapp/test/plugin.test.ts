/**
 * The WhatsApp plugin as a real child process, driven over the plugin contract by a test host,
 * against FakeWhatsApp (./fake-whatsapp.ts) standing in for WhatsApp's servers and the phone
 * behind the transport seam (src/transport.ts; Baileys' real network layer is not exercised —
 * see docs/channels/whatsapp.md). Covered: pairing (QR as text and PNG, scanned, linked; expired;
 * cancelled), the keys on disk (0600), a message in with a read receipt and a reply out, media in
 * and out, bots, a restart in the middle of a conversation (no new QR, the queued reply sent),
 * and a logged-out device asking for pairing again without a crash loop.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ChannelRecipientError, InvalidParamsError, type RpcError } from "@nexo/wire";
import { PluginProcess } from "../../../../examples/plugins/test-helpers/plugin-process.js";
import { FakeWhatsApp } from "./fake-whatsapp.js";

const PLUGIN = "../../packages/channels/whatsapp";
const SOCKET_MODULE = fileURLToPath(new URL("./fake-socket.ts", import.meta.url));
const ACCOUNT = "447700900001:7@s.whatsapp.net";
const ALICE = "447700900123@s.whatsapp.net";
const MALLORY = "15550000000@s.whatsapp.net";
const PNG_MAGIC = "89504e470d0a1a0a";

interface Update {
  challenge_id: string;
  state: string;
  data?: Record<string, string>;
}

function rejectsWith(cls: abstract new (...args: never[]) => RpcError, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    if (pattern) assert.match((error as Error).message, pattern);
    return true;
  };
}

let seq = 0;
const textFrom = (from: string, text: string) => ({
  key: { remoteJid: from, fromMe: false, id: `IN${++seq}` },
  pushName: "Alice",
  messageTimestamp: 1_700_000_000 + seq,
  message: { conversation: text },
});

describe("whatsapp plugin: pairing, messages, media, restart, logout", () => {
  const fake = new FakeWhatsApp();
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-whatsapp-state-"));
  const mediaDir = join(stateDir, "media", "out");
  let plugin: PluginProcess;
  let updates: Update[] = [];
  let challenges = 0;

  const launch = async () => {
    plugin = await PluginProcess.start(PLUGIN, {
      stateDir,
      requestTimeoutMs: 60_000,
      env: {
        NODE_OPTIONS: "--import tsx",
        WHATSAPP_SOCKET_MODULE: SOCKET_MODULE,
        WHATSAPP_FAKE_ADDRESS: fake.address,
        WHATSAPP_ALLOWED_NUMBERS: "+44 7700 900123",
        WHATSAPP_SEND_WAIT_MS: "5000",
        WHATSAPP_RECONNECT_MAX_MS: "500",
      },
    });
    plugin.peer.onNotification("channel.pairing.update", (params) => {
      updates.push(params as Update);
      plugin.wake();
    });
    await plugin.initialize();
  };
  const request = <T = Record<string, unknown>>(method: string, params: Record<string, unknown>) =>
    plugin.peer.request<T>(method, { kind: "whatsapp", instance: null, ...params });
  const startPairing = async (more: Record<string, unknown> = {}) => {
    updates = [];
    const id = `challenge-${++challenges}`;
    const reply = await request("channel.pairing.start", {
      challenge_id: id,
      agent_id: "ana",
      expires_at_ms: Date.now() + 120_000,
      ...more,
    });
    return { id, reply };
  };
  const update = (state: string) =>
    plugin.until(`pairing update ${state}`, () => updates.find((u) => u.state === state), 30_000);
  const send = (msg: Record<string, unknown>) =>
    request<{ message_id: string }>("channel.send_outbound", { msg });

  before(async () => {
    await fake.start();
    mkdirSync(mediaDir, { recursive: true });
    await launch();
  });
  after(async () => {
    await plugin.dispose();
    await fake.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test("initialize offers pairing and bots; an unlinked channel starts and waits for a pairing", async () => {
    // (initialize ran in before(); its reply is checked again here)
    const reply = await plugin.peer.request<{ channel_features: string[] }>("initialize", {
      nexo_version: "0.1.0",
    });
    assert.deepEqual([...reply.channel_features].sort(), ["bots", "pairing"]);
    const started = await request("channel.start", {});
    assert.deepEqual(started, { ok: true, instance: null, linked: false, state: "needs_pairing" });
    await plugin.stderrMatch(/not linked to a phone yet/);
  });

  test("a QR code nobody scans expires; a cancelled pairing leaves no socket and no keys", async () => {
    const first = await startPairing();
    assert.match(String(first.reply.instructions), /Linked devices/);
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr("2@expiring-ref,key,key,adv");
    await update("qr_ready");
    fake.qrTimeout();
    const expired = await update("expired");
    assert.equal(expired.challenge_id, first.id);
    assert.match(expired.data?.error ?? "", /no QR code was scanned/);

    const second = await startPairing();
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    await request("channel.pairing.cancel", { challenge_id: second.id });
    await fake.until("the socket closed", () => (fake.connected ? undefined : true));
    assert.equal(readdirSync(join(stateDir, "auth")).length, 0, "no half-made keys are kept");
  });

  test("by phone number: one code for the number (QR codes not shown), refused numbers, a code not entered in time, nothing in the log", async () => {
    await assert.rejects(
      startPairing({ phone_number: "+44 7700 900002" }),
      rejectsWith(InvalidParamsError, /E\.164/),
    );
    const { id, reply } = await startPairing({ phone_number: "+447700900002" });
    assert.match(String(reply.instructions), /Link with phone number/);
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr("2@code-ref-1,key,key,adv");
    const shown = await update("awaiting_user");
    assert.equal(shown.challenge_id, id);
    const [asked] = fake.codeRequests();
    assert.deepEqual(asked, { phoneNumber: "447700900002", code: shown.data?.pairing_code });
    assert.match(asked!.code, /^[0-9A-Z]{8}$/);
    // The QR rotation goes on under the code: it is neither shown nor a reason for a new code
    // (the fake's messages arrive in order, so by "expired" this one was handled).
    fake.showQr("2@code-ref-2,key,key,adv");
    fake.qrTimeout();
    const expired = await update("expired");
    assert.match(expired.data?.error ?? "", /pairing code was not entered in time/);
    assert.equal(
      updates.filter((u) => u.state === "qr_ready").length,
      0,
      "no QR code while linking by number",
    );
    assert.equal(fake.codeRequests().length, 1);
    assert.equal(readdirSync(join(stateDir, "auth")).length, 0, "the number's half-made keys are gone");

    // WhatsApp refusing the code request ends the pairing at once, its keys wiped too.
    fake.refuseCodes = 1;
    await startPairing({ phone_number: "447700900002" });
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr("2@code-ref-3,key,key,adv");
    const refused = await update("expired");
    assert.match(refused.data?.error ?? "", /did not issue a pairing code/);
    await fake.until("the socket closed", () => (fake.connected ? undefined : true));
    assert.equal(readdirSync(join(stateDir, "auth")).length, 0);
    await plugin.stderrMatch(/pairing code was not entered in time/);
    assert.doesNotMatch(plugin.stderr, /7700900002/, "the number is not in the log");
    assert.doesNotMatch(plugin.stderr, new RegExp(asked!.code), "the code is not in the log");
  });

  test("pairing: QR as text and PNG, scanned, linked; the keys are on disk, owner-only", async () => {
    const { id } = await startPairing();
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr("2@first-ref,key,key,adv");
    const qr = await update("qr_ready");
    assert.equal(qr.challenge_id, id);
    assert.match(qr.data?.qr_ascii ?? "", /█|▀|▄/);
    assert.equal(
      Buffer.from(qr.data?.qr_png_base64 ?? "", "base64")
        .subarray(0, 8)
        .toString("hex"),
      PNG_MAGIC,
    );
    fake.scan(ACCOUNT);
    await update("awaiting_user");
    const linked = await update("linked");
    assert.equal(linked.data?.device_jid, ACCOUNT);
    const creds = join(stateDir, "auth", "_default", "creds.json");
    assert.equal(JSON.parse(readFileSync(creds, "utf8")).me.id, ACCOUNT);
    assert.equal(statSync(creds).mode & 0o777, 0o600);
    assert.equal(statSync(join(stateDir, "auth", "_default")).mode & 0o777, 0o700);
    assert.doesNotMatch(plugin.stderr, /first-ref/, "no QR code in the log");
  });

  test("a message in reaches the agent's topic with a read receipt; strangers are ignored; the reply goes out", async () => {
    const before = plugin.published.length;
    fake.deliver(textFrom(MALLORY, "let me in"));
    const hello = textFrom(ALICE, "hello from the phone");
    fake.deliver(hello);
    const [published] = (await plugin.waitPublished(before + 1, 30_000)).slice(before);
    assert.equal(published!.topic, "plugin.inbound.whatsapp");
    assert.equal(published!.event.payload.contact, ALICE);
    assert.equal(published!.event.payload.text, "hello from the phone");
    assert.equal(published!.event.payload.message_id, `${ALICE}:${hello.key.id}`);
    const read = await fake.until("a read receipt", () =>
      fake.calls.find((c) => c.method === "readMessages"),
    );
    assert.deepEqual(read.args[0], [hello.key]);
    // "typing…" in Alice's chat while the agent works, none for the stranger.
    const presence = () => fake.calls.filter((c) => c.method === "sendPresenceUpdate").map((c) => c.args);
    await fake.until("typing in Alice's chat", () => presence().length > 0 || undefined);
    // (Renewed every 10 s: a slow machine may see it more than once.)
    assert.deepEqual(new Set(presence().map((args) => args.join(" "))), new Set([`composing ${ALICE}`]));
    await plugin.stderrMatch(/15550000000@s\.whatsapp\.net is not in WHATSAPP_ALLOWED_NUMBERS/);
    assert.equal(plugin.published.length, before + 1);

    const sent = await send({ kind: "text", to: ALICE, body: "Hi Alice, from the agent." });
    assert.match(sent.message_id, /^SENT\d+$/);
    await fake.nextSent(ALICE, (c) => c.text === "Hi Alice, from the agent.");
    // The reply went out: typing stops there.
    await fake.until("typing paused", () => presence().find(([type]) => type === "paused"));
    const shown = presence();
    assert.deepEqual(shown.at(-1), ["paused", ALICE]);
    assert.ok(shown.slice(0, -1).every((args) => args[0] === "composing" && args[1] === ALICE));
    await assert.rejects(
      send({ kind: "text", to: MALLORY, body: "hi" }),
      rejectsWith(ChannelRecipientError, /never written/),
    );
    await assert.rejects(send({ kind: "text", to: "alice", body: "hi" }), rejectsWith(ChannelRecipientError));
  });

  test("media in: a photo becomes a local file; media out: a file named in a reply is sent as a picture", async () => {
    const photo = Buffer.from("jpeg bytes of the person's photo ".repeat(8));
    const message = {
      key: { remoteJid: ALICE, fromMe: false, id: `IN${++seq}` },
      message: {
        imageMessage: {
          caption: "what is in this picture?",
          mimetype: "image/jpeg",
          fileLength: photo.length,
        },
      },
    };
    fake.media.set(message.key.id, photo);
    const before = plugin.published.length;
    fake.deliver(message);
    const [published] = (await plugin.waitPublished(before + 1, 30_000)).slice(before);
    const attachments = published!.event.payload.attachments as Array<{ kind: string; path: string }>;
    assert.equal(attachments.length, 1);
    assert.equal(attachments[0]!.kind, "image");
    assert.deepEqual(readFileSync(attachments[0]!.path), photo);
    assert.match(String(published!.event.payload.text), /what is in this picture\?/);

    const chart = join(mediaDir, "chart.png");
    writeFileSync(chart, Buffer.from(PNG_MAGIC, "hex"));
    await send({ kind: "text", to: ALICE, body: `A chart:\nMEDIA: ${chart}` });
    await fake.nextSent(ALICE, (c) => c.text === "A chart:");
    const image = await fake.nextSent(ALICE, (c) => c.image !== undefined);
    assert.deepEqual((image.args[1] as { image: Buffer }).image, Buffer.from(PNG_MAGIC, "hex"));
    const doc = join(mediaDir, "notes.pdf");
    writeFileSync(doc, "%PDF-1.4 not really");
    await send({ kind: "media", to: ALICE, url: doc, caption: "the notes" });
    const sentDoc = await fake.nextSent(ALICE, (c) => c.document !== undefined);
    assert.equal((sentDoc.args[1] as { fileName: string }).fileName, "notes.pdf");
    await assert.rejects(send({ kind: "media", to: ALICE, url: "/etc/passwd" }));
  });

  test("whatsapp bots: listed and messaged through the linked account", async () => {
    const listed = await request<{ bots: unknown[] }>("channel.bots.list", { agent_id: "ana" });
    assert.deepEqual(listed.bots, [{ jid: "867051314767696@bot", persona_id: "meta-ai" }]);
    const sent = await request<{ message_id: string }>("channel.bots.send", {
      agent_id: "ana",
      bot_jid: "867051314767696@bot",
      text: "hello bot",
    });
    assert.match(sent.message_id, /^SENT/);
  });

  test("restart mid-conversation: the keys are restored without a QR and the queued reply is sent", async () => {
    fake.failSends = 1_000;
    const queued = await send({ kind: "text", to: ALICE, body: "Noted: the milk." });
    assert.match(queued.message_id, /^outbox:/);
    const pending = join(stateDir, "outbox", "pending");
    assert.equal(readdirSync(pending).filter((f) => f.endsWith(".json")).length, 1);
    await plugin.shutdown(10_000);
    plugin.peer.close("restart");
    fake.failSends = 0;
    const hellos = fake.hellos;
    await launch();
    const started = await request("channel.start", {});
    assert.equal(started.linked, true);
    assert.equal(started.account, ACCOUNT);
    await fake.nextSent(ALICE, (c) => c.text === "Noted: the milk.");
    assert.equal(fake.hellos, hellos + 1, "one connection, no pairing");
    await plugin.stderrMatch(/sent \(SENT\d+\)\n(?![\s\S]*not sent)/);
    assert.equal(readdirSync(pending).filter((f) => f.endsWith(".json")).length, 0, "settled");
    const before = plugin.published.length;
    fake.deliver(textFrom(ALICE, "what did I say first?"));
    await plugin.waitPublished(before + 1, 30_000);
  });

  test("a dropped connection comes back by itself", async () => {
    const hellos = fake.hellos;
    fake.drop();
    await fake.until("a reconnection", () => (fake.hellos > hellos && fake.connected ? true : undefined));
    await send({ kind: "text", to: ALICE, body: "still here" });
    await fake.nextSent(ALICE, (c) => c.text === "still here");
  });

  test("logged out from the phone: keys removed, no reconnection loop, pairing links again", async () => {
    const hellos = fake.hellos;
    fake.logOut(ACCOUNT);
    await plugin.stderrMatch(/logged this device out.*link the phone again/);
    assert.equal(readdirSync(join(stateDir, "auth")).length, 0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(fake.hellos, hellos, "no reconnection after a logout");
    assert.equal(plugin.child.exitCode, null, "the plugin did not crash");
    const queued = await send({ kind: "text", to: ALICE, body: "after the logout" });
    assert.match(queued.message_id, /^outbox:/, "kept until the device is linked again");

    await startPairing();
    await fake.until("the pairing socket", () => (fake.connected ? true : undefined));
    fake.showQr("2@second-ref,key,key,adv");
    await update("qr_ready");
    fake.scan(ACCOUNT);
    await update("linked");
    await fake.nextSent(ALICE, (c) => c.text === "after the logout");
  });
});
