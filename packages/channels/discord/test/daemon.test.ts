/**
 * The Discord channel through a real daemon: `nexo start` (the built CLI) on a temp config
 * directory, the compiled plugin enabled from plugins.yaml (its token from the daemon's
 * environment), an agent on @nexo/mock-llm, and the fake Discord (./fake-discord.ts): REST and the
 * gateway. A direct message reaches the agent and its reply reaches Discord; a mention in a channel
 * is answered in the thread it starts; an attachment reaches the agent as a local file and a file
 * named in a reply is uploaded; /new and /help as slash commands are answered by the daemon (the
 * deferred reply edited); a reply queued while Discord fails survives a restart of the daemon and
 * the conversation goes on; `nexo plugin check` passes; no token is in any log line. Run
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
import { type Call, FakeDiscord } from "./fake-discord.js";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const BOT = {
  token: "MTIwMDAwMDAwMDAwMDAwMDAwMw.GcCcCc.daemon-token-abcdefghijklmnopqrstu",
  id: "1200000000000000003",
  username: "nexo_test",
  applicationId: "1200000000000000003",
};
const ALICE = { id: "1300000000000000001", username: "alice" };
const GUILD = "1400000000000000001";
const GENERAL = "1400000000000000002";
const DM = "1500000000000000001";
const CHART = Buffer.from("\x89PNG\r\n\x1a\n a chart, not really");

describe("discord channel through nexo start", () => {
  const fake = new FakeDiscord();
  const mock = new MockLlmServer();
  const config = mkdtempSync(join(tmpdir(), "nexo-discord-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-discord-state-"));
  const mediaDir = mkdtempSync(join(tmpdir(), "nexo-discord-media-"));
  const pluginState = join(stateDir, "plugins", "discord");
  const logs: string[] = [];
  let daemon: DaemonProcess;
  const start = async () => {
    const sessions = fake.sessionIds.length;
    const registrations = () =>
      fake.calls.filter((c) => c.method === "PUT" && c.path.endsWith("/commands")).length;
    const registered = registrations();
    daemon = await startDaemonProcess({ config, stateDir, env: { DISCORD_BOT_TOKEN: BOT.token } });
    await fake.until(
      () => fake.sessionIds.length > sessions && fake.connected > 0,
      "the bot's gateway session",
    );
    await fake.until(() => registrations() > registered, "the slash commands registered at start");
  };
  const stop = async () => {
    const exit = await daemon.stop();
    logs.push(daemon.stderr());
    return exit;
  };
  const posted = (text: string, channel: string): Promise<Call> =>
    fake.next(
      (c) =>
        c.method === "POST" &&
        c.outcome === "ok" &&
        c.path === `/channels/${channel}/messages` &&
        c.body.content === text,
    );

  before(async () => {
    await fake.start();
    fake.addBot(BOT);
    fake.addGuild({
      id: GUILD,
      name: "Fake Guild",
      channels: [{ id: GENERAL, name: "general" }],
      threads: [],
    });
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
      plugin: "discord",
      pluginDir: PLUGIN_DIR,
      pluginSettings: `    env:
      DISCORD_BOT_TOKEN: \${DISCORD_BOT_TOKEN}
      DISCORD_ALLOWED_USERS: "${ALICE.id}"
      DISCORD_API_URL: ${fake.apiUrl}
      DISCORD_CDN_URL: ${fake.url}
      DISCORD_MEDIA_DIRS: ${mediaDir}
      DISCORD_SEND_WAIT_MS: "1000"
`,
    });
    await start();
  });
  after(async () => {
    if (daemon.child.exitCode === null) await stop();
    await fake.stop();
    await mock.close();
  });

  test("a direct message in, the agent's reply out", async () => {
    fake.message({ channelId: DM, author: ALICE, content: "hello from the DM" });
    await posted("Hi Alice, from the agent.", DM);
    assert.equal(lastUserText(mock.requests().at(-1)), "hello from the DM");
  });

  test("a mention in a channel is answered in the thread it starts; a stranger is not answered", async () => {
    fake.message({
      channelId: DM,
      author: { id: "1300000000000000099", username: "mallory" },
      content: "status of the build?",
    });
    const mention = fake.message({
      channelId: GENERAL,
      guildId: GUILD,
      author: ALICE,
      content: `<@${BOT.id}> status of the build?`,
      mentions: [BOT],
    });
    await posted("The build is green.", String(mention.id));
    assert.equal(lastUserText(mock.requests().at(-1)), "status of the build?", "the mention is taken out");
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(
      fake.calls.filter((c) => c.body.content === "The build is green.").length,
      1,
      "answered once, and not to the stranger",
    );
  });

  test("an attachment reaches the agent as a local file; a file named in its reply is uploaded", async () => {
    const photo = Buffer.from("jpeg bytes of the user's photo ".repeat(4));
    fake.cdn.set("photo.jpg", photo);
    fake.message({
      channelId: DM,
      author: ALICE,
      content: "what is in this picture?",
      attachments: [
        {
          filename: "photo.jpg",
          url: `${fake.url}/attachments/photo.jpg`,
          size: photo.length,
          content_type: "image/jpeg",
        },
      ],
    });
    await posted("A chart. Here is mine:", DM);
    const upload = await fake.next((c) => c.path === `/channels/${DM}/messages` && c.files.length === 1);
    assert.equal(upload.files[0]!.name, "chart.png");
    assert.deepEqual(upload.files[0]!.bytes, CHART);
    const said = lastUserText(mock.requests().at(-1));
    const path = /\[image "photo\.jpg" attached: (\S+) \(image\/jpeg, [\d.]+ B\)\]/.exec(said)?.[1] ?? "";
    assert.ok(path.startsWith(join(pluginState, "media", "in")), said);
    assert.deepEqual(readFileSync(path), photo);
  });

  test("/new and /help as slash commands: deferred, then answered by the daemon in the edited reply", async () => {
    const command = fake.command({ name: "new", channelId: DM, user: ALICE, bot: BOT });
    const deferred = await fake.next(
      (c) => c.path === `/interactions/${command.id}/${command.token}/callback`,
    );
    assert.equal(deferred.body.type, 5, "DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE");
    const edited = await fake.next(
      (c) =>
        c.method === "PATCH" &&
        c.path === `/webhooks/${BOT.applicationId}/${command.token}/messages/@original`,
    );
    assert.equal(edited.body.content, NEW_CONVERSATION_REPLY);
    const help = fake.command({ name: "help", channelId: DM, user: ALICE, bot: BOT });
    const answered = await fake.next((c) => c.method === "PATCH" && c.path.includes(String(help.token)));
    assert.equal(answered.body.content, CHANNEL_HELP_REPLY);
  });

  test("a reply queued while Discord fails survives a daemon restart; the conversation goes on after it", async () => {
    fake.failPosts = 1_000;
    fake.message({ channelId: DM, author: ALICE, content: "remember the milk" });
    await fake.next((c) => c.outcome === "failed" && c.body.content === "Noted: the milk.");
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
    fake.message({ channelId: DM, author: ALICE, content: "what did I say first?" });
    await posted("You said hello.", DM);
    assert.match(JSON.stringify(mock.requests().at(-1)?.body), /remember the milk/, "the same conversation");
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
    assert.match(all, /discord: connected as @nexo_test in 1 server\(s\)/);
    assert.equal(all.includes(BOT.token), false, "the bot token is in the daemon's log");
    assert.equal(all.includes("GcCcCc"), false, "a part of the token is in the daemon's log");
  });
});
