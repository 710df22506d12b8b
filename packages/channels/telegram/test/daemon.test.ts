/**
 * The Telegram channel through a real daemon: `nexo start` (the built CLI) on a temp config
 * directory, with the compiled plugin enabled from plugins.yaml (its token from the daemon's
 * environment through `${TELEGRAM_BOT_TOKEN}`), an agent on @nexo/mock-llm, and the fake Bot API
 * (./fake-bot-api.ts) as Telegram. A person's message reaches the agent and its reply reaches the
 * chat; a photo reaches the agent as a file and a file named in the reply is uploaded; a reply
 * queued while Telegram fails survives a restart of the daemon and is delivered after it, in the
 * same conversation; `nexo plugin check` passes; the token is in no log line. Run
 * `npm run build` first.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { PNG } from "pngjs";
import { runCli } from "../../../nexo/test/helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../../../nexo/test/helpers/daemon-dir.js";
import { type DaemonProcess, startDaemonProcess } from "../../../nexo/test/helpers/daemon-process.js";
import { waitFor } from "../../../nexo/test/helpers/wait.js";
import { lastUserContent, lastUserText, writeChannelDaemonConfig } from "../../common/test/channel-daemon.js";
import { FakeBotApi } from "./fake-bot-api.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "7770001:AAH-daemon-token-0123456789abcdefghi";
const ALICE = { id: 111, first_name: "Alice", username: "alice" };
const CHAT = { id: 111, type: "private" as const };
const CHART = Buffer.from("\x89PNG\r\n\x1a\n a chart, not really");

describe("telegram channel through nexo start", () => {
  const fake = new FakeBotApi();
  const mock = new MockLlmServer();
  const config = mkdtempSync(join(tmpdir(), "nexo-telegram-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-telegram-state-"));
  const mediaDir = mkdtempSync(join(tmpdir(), "nexo-telegram-media-"));
  const pluginState = join(stateDir, "plugins", "telegram");
  const logs: string[] = [];
  let daemon: DaemonProcess;
  const start = async () => {
    daemon = await startDaemonProcess({ config, stateDir, env: { TELEGRAM_BOT_TOKEN: TOKEN } });
  };
  const stop = async () => {
    const exit = await daemon.stop();
    logs.push(daemon.stderr());
    return exit;
  };
  const sentText = (text: string) =>
    fake.next((c) => c.ok && c.method === "sendMessage" && c.params.text === text);

  before(async () => {
    await fake.start();
    fake.addBot(TOKEN, "nexo_test_bot");
    await mock.start();
    mock.reset([
      { match: "hello", text: "Hi Alice, from the agent." },
      {
        match: "what is in this picture",
        text: "A picture of a chart. Here is mine:\nMEDIA: " + join(mediaDir, "chart.png"),
      },
      { match: "remember the milk", text: "Noted: the milk." },
      { match: "what did I say first", text: "You said hello." },
    ]);
    writeFileSync(join(mediaDir, "chart.png"), CHART);
    writeChannelDaemonConfig({
      config,
      stateDir,
      llmUrl: mock.url,
      plugin: "telegram",
      pluginDir: PLUGIN_DIR,
      pluginSettings: `    env:
      TELEGRAM_BOT_TOKEN: \${TELEGRAM_BOT_TOKEN}
      TELEGRAM_ALLOWED_USERS: "@alice"
      TELEGRAM_API_ROOT: ${fake.url}
      TELEGRAM_MEDIA_DIRS: ${mediaDir}
      TELEGRAM_POLL_TIMEOUT_SECS: "5"
      TELEGRAM_SEND_WAIT_MS: "1000"
`,
    });
    await start();
  });
  after(async () => {
    if (daemon.child.exitCode === null) await stop();
    await fake.stop();
    await mock.close();
  });

  test("a message in, the agent's reply out", async () => {
    fake.userSends("nexo_test_bot", { chat: CHAT, from: ALICE, text: "hello there" });
    await sentText("Hi Alice, from the agent.");
    assert.equal(lastUserText(mock.requests().at(-1)), "hello there");
  });

  test("a photo reaches the agent as a file and as a picture the model sees; a file named in its reply is uploaded", async () => {
    const picture = new PNG({ width: 3, height: 2 });
    picture.data.fill(120);
    const photo = PNG.sync.write(picture);
    fake.userSends("nexo_test_bot", { chat: CHAT, from: ALICE, caption: "what is in this picture?", photo });
    const upload = await fake.next((c) => c.ok && c.method === "sendPhoto");
    const said = lastUserText(mock.requests().at(-1));
    const path = /\[image attached: (\S+) \(image\/jpeg, [\d.]+ B\)\]/.exec(said)?.[1] ?? "";
    assert.ok(path.startsWith(join(pluginState, "media", "in", "111")), said);
    assert.deepEqual(readFileSync(path), photo);
    const userTurn = lastUserContent(mock.requests().at(-1));
    assert.deepEqual(
      userTurn.filter((block) => block.type === "image"),
      [
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: photo.toString("base64") },
        },
      ],
      "the daemon read the plugin's download and sent it to the model as an image",
    );
    assert.equal(fake.sent(111).at(-2)!.params.text, "A picture of a chart. Here is mine:");
    const file = upload.files.photo;
    assert.ok(file?.kind === "upload");
    assert.deepEqual(file.bytes, CHART);
  });

  test("a reply queued while Telegram fails survives a daemon restart and is delivered after it", async () => {
    fake.outage("sendMessage", { error_code: 502, description: "Bad Gateway" });
    fake.userSends("nexo_test_bot", { chat: CHAT, from: ALICE, text: "remember the milk" });
    await fake.next((c) => !c.ok && c.method === "sendMessage");
    const pending = join(pluginState, "outbox", "pending");
    const queued = readdirSync(pending).filter((f) => f.endsWith(".json"));
    assert.equal(queued.length, 1);
    const record = JSON.parse(readFileSync(join(pending, queued[0]!), "utf8"));
    assert.equal(record.item.text, "Noted: the milk.");
    const exit = await stop();
    assert.equal(exit.code, 0);
    assert.ok(
      existsSync(join(pending, queued[0]!)),
      "the queued reply is still on disk after the daemon stopped",
    );

    fake.restore();
    await start();
    await sentText("Noted: the milk.");
    // The fake saw the send; the plugin settles the record once Telegram's answer is back.
    const delivered = await waitFor("the delivery status of the queued reply", () =>
      readFileSync(join(pluginState, "outbox", "delivery.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: string; status: string; attempts: number })
        .find((entry) => entry.id === record.id),
    );
    assert.equal(delivered.status, "sent");
    assert.ok(delivered.attempts >= 2, "tried before the restart, sent after it");
    // The record is settled (its status line) before its pending file goes: wait for both.
    await waitFor(
      "the queued reply's pending file to go",
      () => readdirSync(pending).every((f) => !f.endsWith(".json")) || undefined,
    );

    // The conversation goes on in the same session: the model sees what was said before the restart.
    fake.userSends("nexo_test_bot", { chat: CHAT, from: ALICE, text: "what did I say first?" });
    await sentText("You said hello.");
    const history = JSON.stringify(mock.requests().at(-1)?.body);
    assert.match(history, /hello there/);
    assert.match(history, /remember the milk/);
  });

  test("nexo plugin check passes on the channel", async () => {
    const result = await runCli(["plugin", "check", PLUGIN_DIR], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /plugin check: passed/);
  });

  test("the token is in no log line of either run", async () => {
    await stop();
    const all = logs.join("\n");
    assert.match(all, /telegram: connected as @nexo_test_bot/);
    assert.equal(all.includes(TOKEN), false, "the bot token is in the daemon's log");
    assert.equal(all.includes(TOKEN.split(":")[1]!), false);
  });
});
