/**
 * The Slack channel through a real daemon: `nexo start` (the built CLI) on a temp config directory,
 * the compiled plugin enabled from plugins.yaml (its tokens from the daemon's environment), an
 * agent on @nexo/mock-llm, and the fake Slack (./fake-slack.ts) over Socket Mode. A direct message
 * and a channel mention (answered in its thread) reach the agent and its replies reach Slack; a
 * posted file reaches the agent as a local file and a file named in a reply is uploaded into the
 * thread; /new and /help work as slash commands; a reply queued while Slack fails survives a
 * restart of the daemon; `nexo plugin check` passes; no token is in any log line. Run
 * `npm run build` first.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { CHANNEL_HELP_REPLY, NEW_CONVERSATION_REPLY } from "../../../nexo/src/daemon/routing/commands.js";
import { runCli } from "../../../nexo/test/helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../../../nexo/test/helpers/daemon-dir.js";
import { type DaemonProcess, startDaemonProcess } from "../../../nexo/test/helpers/daemon-process.js";
import { lastUserText, writeChannelDaemonConfig } from "../../common/test/channel-daemon.js";
import { FakeSlack } from "./fake-slack.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const BOT_TOKEN = "xoxb-1111-2222-daemontokenabcdef";
const APP_TOKEN = "xapp-1-A0FAKE-3333-apptokenabcdef0123";
const BOT = {
  botToken: BOT_TOKEN,
  appToken: APP_TOKEN,
  userId: "UBOT01",
  botId: "BBOT01",
  name: "nexo_test",
};
const ALICE = "UALICE1";
const DM = "D0DM0001";
const GENERAL = "C0GENERAL";
const CHART = Buffer.from("\x89PNG\r\n\x1a\n a chart, not really");

let ts = 1_700_000_000;
const nextTs = () => `${++ts}.000100`;

describe("slack channel through nexo start", () => {
  const fake = new FakeSlack();
  const mock = new MockLlmServer();
  const config = mkdtempSync(join(tmpdir(), "nexo-slack-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-slack-state-"));
  const mediaDir = mkdtempSync(join(tmpdir(), "nexo-slack-media-"));
  const pluginState = join(stateDir, "plugins", "slack");
  const logs: string[] = [];
  let daemon: DaemonProcess;
  const start = async () => {
    const connected = fake.connected;
    daemon = await startDaemonProcess({
      config,
      stateDir,
      env: { SLACK_BOT_TOKEN: BOT_TOKEN, SLACK_APP_TOKEN: APP_TOKEN },
    });
    await fake.until(() => fake.connected > connected, "the app's Socket Mode connection");
  };
  const stop = async () => {
    const exit = await daemon.stop();
    logs.push(daemon.stderr());
    return exit;
  };
  const posted = (text: string, channel: string) =>
    fake.next(
      (c) => c.method === "chat.postMessage" && c.params.text === text && c.params.channel === channel,
    );

  before(async () => {
    await fake.start();
    fake.addBot(BOT);
    await mock.start();
    mock.reset([
      { match: "hello from the DM", text: "Hi Alice, from the agent." },
      { match: "status of the build", text: "The build is green." },
      {
        match: "what is in this picture",
        text: `A chart. Here is mine:\nMEDIA: ${join(mediaDir, "chart.png")}`,
      },
      { match: "remember the milk", text: "Noted: the milk." },
      { match: "what did I say first", text: "You said hello." },
    ]);
    writeFileSync(join(mediaDir, "chart.png"), CHART);
    writeChannelDaemonConfig({
      config,
      stateDir,
      llmUrl: mock.url,
      plugin: "slack",
      pluginDir: PLUGIN_DIR,
      pluginSettings: `    env:
      SLACK_BOT_TOKEN: \${SLACK_BOT_TOKEN}
      SLACK_APP_TOKEN: \${SLACK_APP_TOKEN}
      SLACK_ALLOWED_USERS: ${ALICE}
      SLACK_API_URL: ${fake.apiUrl}
      SLACK_MEDIA_DIRS: ${mediaDir}
      SLACK_SEND_WAIT_MS: "1000"
`,
    });
    await start();
  });
  after(async () => {
    if (daemon.child.exitCode === null) await stop();
    await fake.stop();
    await mock.close();
  });

  test("a direct message in, the agent's reply out; the envelope is acknowledged", async () => {
    const envelope = fake.pushEvent({
      type: "message",
      channel_type: "im",
      channel: DM,
      user: ALICE,
      text: "hello from the DM",
      ts: nextTs(),
    });
    const reply = await posted("Hi Alice, from the agent.", DM);
    assert.equal(reply.params.thread_ts, undefined, "a direct message is answered in the conversation");
    assert.ok(fake.acks.includes(envelope));
    assert.equal(lastUserText(mock.requests().at(-1)), "hello from the DM");
  });

  test("a mention in a channel is answered in its thread; others' posts and the plain event are not", async () => {
    const at = nextTs();
    fake.pushEvent({
      type: "message",
      channel_type: "channel",
      channel: GENERAL,
      user: ALICE,
      text: `<@${BOT.userId}> status of the build?`,
      ts: at,
    });
    fake.pushEvent({
      type: "message",
      channel_type: "im",
      channel: DM,
      user: "UMALLORY",
      text: "status of the build?",
      ts: nextTs(),
    });
    fake.pushEvent({
      type: "app_mention",
      channel: GENERAL,
      user: ALICE,
      text: `<@${BOT.userId}> status of the build?`,
      ts: at,
    });
    const reply = await posted("The build is green.", GENERAL);
    assert.equal(reply.params.thread_ts, at);
    assert.equal(lastUserText(mock.requests().at(-1)), "status of the build?", "the mention is taken out");
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(
      fake.calls.filter((c) => c.method === "chat.postMessage" && c.params.text === "The build is green.")
        .length,
      1,
      "answered once: the plain message event and the stranger's DM were ignored",
    );
  });

  test("a posted file reaches the agent as a local file; a file named in its reply is uploaded into the thread", async () => {
    const photo = Buffer.from("jpeg bytes of the user's photo ".repeat(4));
    fake.files.set("photo.jpg", photo);
    const at = nextTs();
    fake.pushEvent({
      type: "app_mention",
      channel: GENERAL,
      user: ALICE,
      text: `<@${BOT.userId}> what is in this picture?`,
      ts: at,
      files: [
        {
          id: "F0IN",
          name: "photo.jpg",
          mimetype: "image/jpeg",
          size: photo.length,
          url_private_download: `${fake.url}/files/photo.jpg`,
        },
      ],
    });
    const completed = await fake.next((c) => c.method === "files.completeUploadExternal");
    assert.equal(completed.params.channel_id, GENERAL);
    assert.equal(completed.params.thread_ts, at);
    const said = lastUserText(mock.requests().at(-1));
    const path = /\[image "photo\.jpg" attached: (\S+) \(image\/jpeg, [\d.]+ B\)\]/.exec(said)?.[1] ?? "";
    assert.ok(path.startsWith(join(pluginState, "media", "in")), said);
    assert.deepEqual(readFileSync(path), photo);
    const [id] = JSON.parse(String(completed.params.files)) as Array<{ id: string }>;
    assert.deepEqual(fake.uploads.get(id!.id), CHART);
    await posted("A chart. Here is mine:", GENERAL);
  });

  test("/new and /help as slash commands are answered by the daemon", async () => {
    fake.pushCommand("/new", "", ALICE, DM);
    await posted(NEW_CONVERSATION_REPLY, DM);
    fake.pushCommand("/nexo", "help", ALICE, DM);
    await posted(CHANNEL_HELP_REPLY, DM);
  });

  test("a reply queued while Slack fails survives a daemon restart and is delivered after it", async () => {
    fake.failPosts = 1_000;
    fake.pushEvent({
      type: "message",
      channel_type: "im",
      channel: DM,
      user: ALICE,
      text: "remember the milk",
      ts: nextTs(),
    });
    await fake.next((c) => c.method === "chat.postMessage (failed)" && c.params.text === "Noted: the milk.");
    const pending = join(pluginState, "outbox", "pending");
    const queued = readdirSync(pending).filter((f) => f.endsWith(".json"));
    assert.equal(queued.length, 1);
    assert.equal((await stop()).code, 0);
    assert.deepEqual(
      readdirSync(pending).filter((f) => f.endsWith(".json")),
      queued,
      "still on disk after the stop",
    );
    fake.failPosts = 0;
    await start();
    await posted("Noted: the milk.", DM);
    fake.pushEvent({
      type: "message",
      channel_type: "im",
      channel: DM,
      user: ALICE,
      text: "what did I say first?",
      ts: nextTs(),
    });
    await posted("You said hello.", DM);
    assert.match(
      JSON.stringify(mock.requests().at(-1)?.body),
      /remember the milk/,
      "the same conversation after the restart",
    );
  });

  test("nexo plugin check passes on the channel", async () => {
    const result = await runCli(["plugin", "check", PLUGIN_DIR], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /plugin check: passed/);
  });

  test("no token is in any log line of either run", async () => {
    await stop();
    const all = logs.join("\n");
    assert.match(all, /slack: connected as @nexo_test in Fake Team by Socket Mode/);
    assert.equal(all.includes(BOT_TOKEN), false, "the bot token is in the daemon's log");
    assert.equal(all.includes(APP_TOKEN), false, "the app token is in the daemon's log");
  });
});
