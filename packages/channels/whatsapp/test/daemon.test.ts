/**
 * The WhatsApp channel through a real daemon: `nexo start` (the built CLI) on a temp config
 * directory, the compiled plugin enabled from plugins.yaml, an agent on @nexo/mock-llm, and
 * FakeWhatsApp (./fake-whatsapp.ts) behind the plugin's transport seam. The device is already
 * linked (its credentials are on disk, as a pairing leaves them): a message in reaches the agent
 * and its reply reaches the chat, a picture reaches the agent as a local file and a file named in
 * a reply is sent as a document, and a reply queued while WhatsApp fails survives a restart of the
 * daemon and is delivered after it, in the same conversation. `nexo plugin check` passes. Run
 * `npm run build` first.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { runCli } from "../../../nexo/test/helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../../../nexo/test/helpers/daemon-dir.js";
import { type DaemonProcess, startDaemonProcess } from "../../../nexo/test/helpers/daemon-process.js";
import { lastUserText, writeChannelDaemonConfig } from "../../common/test/channel-daemon.js";
import { AuthStore } from "../src/auth-store.js";
import { loadBaileys } from "../src/baileys.js";
import { FakeWhatsApp } from "./fake-whatsapp.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const SOCKET_MODULE = fileURLToPath(new URL("./fake-socket.ts", import.meta.url));
const ACCOUNT = "447700900001:3@s.whatsapp.net";
const ALICE = "447700900123@s.whatsapp.net";

let seq = 0;
const fromAlice = (message: Record<string, unknown>) => ({
  key: { remoteJid: ALICE, fromMe: false, id: `D${++seq}` },
  pushName: "Alice",
  messageTimestamp: 1_700_000_000 + seq,
  message,
});

describe("whatsapp channel through nexo start", () => {
  const fake = new FakeWhatsApp();
  const mock = new MockLlmServer();
  const config = mkdtempSync(join(tmpdir(), "nexo-whatsapp-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-whatsapp-dstate-"));
  const mediaDir = mkdtempSync(join(tmpdir(), "nexo-whatsapp-media-"));
  const pluginState = join(stateDir, "plugins", "whatsapp");
  let daemon: DaemonProcess;
  const start = async () => {
    const hellos = fake.hellos;
    daemon = await startDaemonProcess({ config, stateDir });
    await fake.until("the device's connection", () =>
      fake.hellos > hellos && fake.connected ? true : undefined,
    );
  };
  const stop = async () => daemon.stop();
  const sentText = (text: string) => fake.nextSent(ALICE, (c) => c.text === text);

  before(async () => {
    await fake.start();
    await mock.start();
    mock.reset([
      { match: "hello from the phone", text: "Hi Alice, from the agent." },
      {
        match: "what is in this picture",
        text: `A receipt. The notes:\nMEDIA: ${join(mediaDir, "notes.pdf")}`,
      },
      { match: "remember the milk", text: "Noted: the milk." },
      { match: "what did I say first", text: "You said hello." },
    ]);
    writeFileSync(join(mediaDir, "notes.pdf"), "%PDF-1.4 the notes");
    // Linked earlier: the credentials a pairing leaves (real Baileys credentials, `me` set).
    await loadBaileys();
    const auth = new AuthStore(pluginState, null);
    const { state, saveCreds } = auth.open();
    state.creds.me = { id: ACCOUNT, name: "nexo phone" };
    saveCreds();
    fake.linked.add(ACCOUNT);
    writeChannelDaemonConfig({
      config,
      stateDir,
      llmUrl: mock.url,
      plugin: "whatsapp",
      pluginDir: PLUGIN_DIR,
      pluginSettings: `    env:
      NODE_OPTIONS: "--import tsx"
      WHATSAPP_SOCKET_MODULE: ${SOCKET_MODULE}
      WHATSAPP_FAKE_ADDRESS: ${fake.address}
      WHATSAPP_ALLOWED_NUMBERS: "+44 7700 900123"
      WHATSAPP_MEDIA_DIRS: ${mediaDir}
      WHATSAPP_SEND_WAIT_MS: "1000"
`,
    });
    await start();
  });
  after(async () => {
    if (daemon.child.exitCode === null) await stop();
    await fake.stop();
    await mock.close();
    for (const dir of [config, stateDir, mediaDir]) rmSync(dir, { recursive: true, force: true });
  });

  test("a message in, the agent's reply out, the message marked read", async () => {
    const hello = fromAlice({ conversation: "hello from the phone" });
    fake.deliver(hello);
    await sentText("Hi Alice, from the agent.");
    assert.equal(lastUserText(mock.requests().at(-1)), "hello from the phone");
    assert.ok(fake.calls.some((c) => c.method === "readMessages"));
  });

  test("a picture reaches the agent as a local file; a file named in its reply is sent as a document", async () => {
    const photo = Buffer.from("jpeg bytes of a receipt ".repeat(6));
    const message = fromAlice({
      imageMessage: { caption: "what is in this picture?", mimetype: "image/jpeg", fileLength: photo.length },
    });
    fake.media.set(message.key.id, photo);
    fake.deliver(message);
    const doc = await fake.nextSent(ALICE, (c) => c.document !== undefined);
    assert.equal((doc.args[1] as { fileName: string }).fileName, "notes.pdf");
    await sentText("A receipt. The notes:");
    const said = lastUserText(mock.requests().at(-1));
    const path = /\[image[^\]]* attached: (\S+) \(image\/jpeg/.exec(said)?.[1] ?? "";
    assert.ok(path.startsWith(join(pluginState, "media", "in")), said);
    assert.deepEqual(readFileSync(path), photo);
  });

  test("a reply queued while WhatsApp fails survives a daemon restart and is delivered after it", async () => {
    fake.failSends = 1_000;
    fake.deliver(fromAlice({ conversation: "remember the milk" }));
    await fake.until("a failed send", () =>
      fake.calls.find(
        (c) =>
          c.method === "sendMessage (failed)" && (c.args[1] as { text?: string }).text === "Noted: the milk.",
      ),
    );
    const pending = join(pluginState, "outbox", "pending");
    const queued = readdirSync(pending).filter((f) => f.endsWith(".json"));
    assert.equal(queued.length, 1);
    assert.equal((await stop()).code, 0);
    assert.deepEqual(
      readdirSync(pending).filter((f) => f.endsWith(".json")),
      queued,
      "still on disk after the stop",
    );
    fake.failSends = 0;
    await start();
    await sentText("Noted: the milk.");
    fake.deliver(fromAlice({ conversation: "what did I say first?" }));
    await sentText("You said hello.");
    assert.match(
      JSON.stringify(mock.requests().at(-1)?.body),
      /remember the milk/,
      "the same conversation after the restart",
    );
    assert.match(daemon.stderr(), /whatsapp: connected as 447700900001:3@s\.whatsapp\.net/);
  });

  test("nexo plugin check passes on the channel", async () => {
    const result = await runCli(["plugin", "check", PLUGIN_DIR], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /plugin check: passed/);
  });
});
