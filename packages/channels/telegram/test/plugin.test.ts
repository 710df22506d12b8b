/**
 * The Telegram plugin, compiled, run as the daemon runs it (the daemon's manifest loader and
 * launcher, a JSON-RPC peer playing the host) against the fake Bot API (./fake-bot-api.ts):
 * the credential methods (validate, probe getMe, persist and rotation), long polling in and out,
 * private chats and groups (mention rules, the allowlist), media both ways, the outbound
 * allowlist and media directories, Telegram's 429, and a webhook-mode process. Run
 * `npm run build` first (the plugin runs from dist/).
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  ChannelAuthenticationError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  type RpcError,
} from "@nexo/wire";
import { PluginProcess } from "../../../../examples/plugins/test-helpers/plugin-process.js";
import { type ApiCall, FakeBotApi } from "./fake-bot-api.js";

// PluginProcess.start takes a path relative to examples/plugins/.
const PLUGIN = "../../packages/channels/telegram";
const TOKEN_A = "5550001:AAH-first-token-0123456789abcdefghijk";
const TOKEN_B = "5550002:AAH-second-token-0123456789abcdefghij";
const ALICE = { id: 111, first_name: "Alice", username: "alice" };
const MALLORY = { id: 666, first_name: "Mallory", username: "mallory" };
const PRIVATE = { id: 111, type: "private" as const };
const GROUP = { id: -100200, type: "supergroup" as const, title: "Team" };

type Receipt = { message_id: string; sent_at_unix: number };

function rejectsWith(cls: abstract new (...args: never[]) => RpcError, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    if (pattern) assert.match((error as Error).message, pattern);
    return true;
  };
}

describe("telegram plugin over the fake Bot API (long polling)", () => {
  const fake = new FakeBotApi();
  let plugin: PluginProcess;
  let mediaDir: string;
  const send = (msg: Record<string, unknown>) =>
    plugin.peer.request<Receipt>("channel.send_outbound", { kind: "telegram", msg });
  const credential = (method: string, token: string) =>
    plugin.peer.request<Record<string, unknown>>(`channel.credentials.${method}`, {
      kind: "telegram",
      instance: null,
      payload: { token },
      metadata: {},
    });
  const publishedText = async (count: number) =>
    (await plugin.waitPublished(count))[count - 1]!.event.payload;

  before(async () => {
    await fake.start();
    fake.addBot(TOKEN_A, "first_bot");
    fake.addBot(TOKEN_B, "second_bot");
    plugin = await PluginProcess.start(PLUGIN, {
      env: {
        TELEGRAM_API_ROOT: fake.url,
        TELEGRAM_ALLOWED_USERS: "@Alice, 4242",
        TELEGRAM_POLL_TIMEOUT_SECS: "5",
        TELEGRAM_RATE_PER_MINUTE: "600",
      },
    });
    mediaDir = join(plugin.stateDir, "media", "out");
  });
  after(async () => {
    await plugin.dispose();
    await fake.stop();
  });

  test("initialize advertises the credential persister; without a token channel.start is -33002", async () => {
    const reply = await plugin.initialize();
    assert.deepEqual(reply.channel_features, ["credentials"]);
    await assert.rejects(
      plugin.peer.request("channel.start", { kind: "telegram", instance: null }),
      rejectsWith(ChannelAuthenticationError, /no bot token/),
    );
  });

  test("credentials: validate checks the shape, probe calls getMe, persist stores the token (0600)", async () => {
    assert.deepEqual(await credential("validate", "not-a-token"), {
      valid: false,
      reason_code: "invalid_payload",
      detail: "payload.token must be a Telegram bot token as @BotFather gives it (<bot id>:<secret>)",
    });
    assert.deepEqual(await credential("validate", TOKEN_A), { valid: true });
    const unknown = await credential("probe", "5559999:AAH-unknown-token-0123456789abcdefgh");
    assert.equal(unknown.reason_code, "auth_failed");
    assert.equal(unknown.healthy, false);
    assert.deepEqual(await credential("probe", TOKEN_A), {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: "authenticated as @first_bot (bot id 5550001)",
    });
    assert.deepEqual(await credential("persist", TOKEN_A), { ok: true });
    const file = join(plugin.stateDir, "credentials", "_default.json");
    assert.equal(JSON.parse(readFileSync(file, "utf8")).token, TOKEN_A);
  });

  test("channel.start connects with the registered token by long polling", async () => {
    const started = await plugin.peer.request<Record<string, unknown>>("channel.start", {
      kind: "telegram",
      instance: null,
    });
    assert.deepEqual(started, {
      ok: true,
      mode: "polling",
      bot_id: 5550001,
      bot_username: "first_bot",
      instance: null,
    });
    // Long polling begins by removing any webhook (a held getUpdates is only recorded when answered).
    await fake.next((c) => c.method === "deleteWebhook");
  });

  test("a private message from an allowed user is published for the chat's session; typing is shown", async () => {
    const message = fake.userSends("first_bot", { chat: PRIVATE, from: ALICE, text: "hello nexo" });
    const payload = await publishedText(1);
    assert.equal(plugin.published[0]!.topic, "plugin.inbound.telegram");
    assert.deepEqual(
      { ...payload, timestamp: undefined },
      {
        contact: "111",
        sender_id: "111",
        sender_name: "Alice (@alice)",
        chat_type: "private",
        text: "hello nexo",
        message_id: `111:${message.message_id}`,
        telegram_message_id: message.message_id,
        attachments: [],
        timestamp: undefined,
      },
    );
    const typing = await fake.next((c) => c.method === "sendChatAction");
    assert.deepEqual(typing.params, { chat_id: "111", action: "typing" });
  });

  test("someone not on the allowlist is ignored (logged with their id), and the bot may not write to them", async () => {
    fake.userSends("first_bot", { chat: { id: 666, type: "private" }, from: MALLORY, text: "let me in" });
    await plugin.stderrMatch(/message ignored: user 666 \(@mallory\) is not in TELEGRAM_ALLOWED_USERS/);
    assert.equal(plugin.published.length, 1);
    await assert.rejects(
      send({ kind: "text", to: "666", body: "hi" }),
      rejectsWith(ChannelRecipientError, /never written/),
    );
    await assert.rejects(
      send({ kind: "text", to: "@alice", body: "hi" }),
      rejectsWith(ChannelRecipientError, /not a Telegram chat id/),
    );
  });

  test("a reply goes out with sendMessage; a long one in pieces of at most 4096 characters", async () => {
    const receipt = await send({ kind: "text", to: "111", body: "hi Alice" });
    const [sent] = fake.sent(111);
    assert.equal(sent!.params.text, "hi Alice");
    assert.equal(receipt.message_id, `111:${(sent!.result as { message_id: number }).message_id}`);
    const long = `${"a".repeat(4000)}\n${"b".repeat(3000)}`;
    await send({ kind: "text", to: "111", body: long });
    const pieces = fake
      .sent(111)
      .slice(1)
      .map((c) => c.params.text as string);
    assert.deepEqual(pieces, ["a".repeat(4000), "b".repeat(3000)]);
  });

  test("in a group the bot answers only when mentioned, replying to the message that mentioned it", async () => {
    fake.userSends("first_bot", { chat: GROUP, from: ALICE, text: "just chatting" });
    await plugin.stderrMatch(/group -100200: the bot was not mentioned/);
    const mention = fake.userSends("first_bot", {
      chat: GROUP,
      from: ALICE,
      text: "@first_bot what time is it?",
      entities: [{ type: "mention", offset: 0, length: 10 }],
    });
    const payload = await publishedText(2);
    assert.equal(payload.contact, "-100200");
    assert.equal(payload.text, "Alice (@alice): what time is it?");
    await send({ kind: "text", to: "-100200", body: "noon" });
    const [answer] = fake.sent(-100200);
    assert.deepEqual(answer!.params.reply_parameters, {
      message_id: mention.message_id,
      allow_sending_without_reply: true,
    });
  });

  test("a photo, a document and a voice note arrive as downloaded attachments named in the text", async () => {
    const photo = Buffer.from("fake-jpeg-bytes-".repeat(20));
    const pdf = Buffer.from("%PDF-1.4 fake");
    const voice = Buffer.from("OggS fake voice");
    fake.userSends("first_bot", { chat: PRIVATE, from: ALICE, caption: "what is this?", photo });
    fake.userSends("first_bot", {
      chat: PRIVATE,
      from: ALICE,
      document: { bytes: pdf, file_name: "report.pdf", mime_type: "application/pdf" },
    });
    fake.userSends("first_bot", { chat: PRIVATE, from: ALICE, voice: { bytes: voice, duration: 3 } });
    const events = (await plugin.waitPublished(5)).slice(2).map((p) => p.event.payload);
    const attachments = events.map((e) => (e.attachments as Array<Record<string, unknown>>)[0]!);
    assert.deepEqual(
      attachments.map((a) => [a.kind, a.mime_type, a.size_bytes]),
      [
        ["image", "image/jpeg", photo.length],
        ["document", "application/pdf", pdf.length],
        ["voice", "audio/ogg", voice.length],
      ],
    );
    assert.deepEqual(
      readFileSync(attachments[0]!.path as string),
      photo,
      "the largest photo size, downloaded",
    );
    assert.deepEqual(readFileSync(attachments[1]!.path as string), pdf);
    assert.deepEqual(readFileSync(attachments[2]!.path as string), voice);
    assert.ok((attachments[0]!.path as string).startsWith(join(plugin.stateDir, "media", "in", "111")));
    assert.equal(
      events[0]!.text,
      `what is this?\n[image attached: ${attachments[0]!.path} (image/jpeg, 320 B)]`,
    );
    assert.match(
      events[1]!.text as string,
      /^\[document "report\.pdf" attached: .*report\.pdf \(application\/pdf, 13 B\)\]$/,
    );
  });

  test("media out: a URL for Telegram to fetch, a MEDIA: line uploading a file from the media directory", async () => {
    await send({ kind: "media", to: "111", url: "https://example.org/cat.jpg", caption: "a cat" });
    const byUrl = fake.sent(111).at(-1)!;
    assert.equal(byUrl.method, "sendPhoto");
    assert.deepEqual(byUrl.files.photo, { kind: "url", url: "https://example.org/cat.jpg" });
    assert.equal(byUrl.params.caption, "a cat");

    mkdirSync(mediaDir, { recursive: true });
    writeFileSync(join(mediaDir, "notes.txt"), "the notes");
    const before = fake.sent(111).length;
    await send({
      kind: "text",
      to: "111",
      body: `Here are the notes.\nMEDIA: ${join(mediaDir, "notes.txt")}`,
    });
    const [text, doc] = fake.sent(111).slice(before) as [ApiCall, ApiCall];
    assert.equal(text.params.text, "Here are the notes.");
    assert.equal(doc.method, "sendDocument");
    const upload = doc.files.document;
    assert.ok(upload?.kind === "upload", JSON.stringify(upload));
    assert.equal(upload.name, "notes.txt");
    assert.equal(upload.bytes.toString(), "the notes");
  });

  test("a local file outside the media directories is never uploaded", async () => {
    await assert.rejects(
      send({ kind: "media", to: "111", url: "/etc/passwd" }),
      rejectsWith(ChannelUnsupportedError, /outside the media directories/),
    );
    const before = fake.sent(111).length;
    await send({ kind: "text", to: "111", body: "sure\nMEDIA: /etc/hostname" });
    await plugin.stderrMatch(/attachment left out: \/etc\/hostname: is outside the media directories/);
    const after = fake.sent(111).slice(before);
    assert.deepEqual(
      after.map((c) => [c.method, c.params.text]),
      [["sendMessage", "sure"]],
    );
  });

  test("Telegram's 429 is waited out (retry_after) and the message still goes out once", async () => {
    fake.outage("sendMessage", {
      error_code: 429,
      description: "Too Many Requests: retry after 1",
      retry_after: 1,
    });
    const limited = fake.next((c) => c.method === "sendMessage" && !c.ok);
    const receipt = send({ kind: "text", to: "111", body: "after the limit" });
    await limited;
    fake.restore();
    await receipt;
    assert.equal(fake.sent(111).filter((c) => c.params.text === "after the limit").length, 1);
    await plugin.stderrMatch(
      /not sent \(attempt 1\): sendMessage: 429 Too Many Requests: retry after 1; retrying in 1000 ms/,
    );
  });

  test("a rejected chat fails at once with -33003 and its reason", async () => {
    fake.outage("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" });
    await assert.rejects(
      send({ kind: "text", to: "111", body: "anyone?" }),
      rejectsWith(ChannelRecipientError, /bot was blocked/),
    );
    fake.restore();
  });

  test("rotation: a newly persisted token reconnects the running channel as the new bot", async () => {
    // A token Telegram refuses is not saved, and the running bot keeps going.
    await assert.rejects(
      credential("persist", "5559999:AAH-unknown-token-0123456789abcdefgh"),
      rejectsWith(ChannelAuthenticationError, /refused the new token/),
    );
    const saved = join(plugin.stateDir, "credentials", "_default.json");
    assert.equal(JSON.parse(readFileSync(saved, "utf8")).token, TOKEN_A);
    assert.deepEqual(await credential("persist", TOKEN_B), { ok: true });
    assert.equal(JSON.parse(readFileSync(saved, "utf8")).token, TOKEN_B);
    await plugin.stderrMatch(/connected as @second_bot/);
    fake.revoke(TOKEN_A);
    const count = plugin.published.length;
    fake.userSends("second_bot", { chat: PRIVATE, from: ALICE, text: "still there?" });
    const payload = await publishedText(count + 1);
    assert.equal(payload.text, "still there?");
    await send({ kind: "text", to: "111", body: "yes, as the second bot" });
    const last = fake.sent(111).at(-1)!;
    assert.equal(last.botId, 5550002);
  });

  test("no token ever reaches stderr (the daemon's log)", () => {
    assert.ok(plugin.stderr.length > 0);
    for (const token of [TOKEN_A, TOKEN_B, TOKEN_A.split(":")[1]!, TOKEN_B.split(":")[1]!]) {
      assert.equal(plugin.stderr.includes(token), false, `a token is in the log:\n${plugin.stderr}`);
    }
  });

  test("shutdown acknowledges and the plugin exits", async () => {
    const { exit } = await plugin.shutdown(10_000);
    assert.equal(exit.code, 0);
  });
});

describe("telegram plugin in webhook mode", () => {
  const fake = new FakeBotApi();
  let plugin: PluginProcess;
  const SECRET = "a-webhook-secret-of-the-operator";

  before(async () => {
    await fake.start();
    fake.addBot(TOKEN_A, "first_bot");
    plugin = await PluginProcess.start(PLUGIN, {
      env: {
        TELEGRAM_BOT_TOKEN: TOKEN_A,
        TELEGRAM_API_ROOT: fake.url,
        TELEGRAM_MODE: "webhook",
        TELEGRAM_WEBHOOK_URL: "https://bot.example.org/telegram/hook",
        TELEGRAM_WEBHOOK_PORT: "0",
        TELEGRAM_WEBHOOK_SECRET: SECRET,
        TELEGRAM_ALLOWED_USERS: "*",
      },
    });
    await plugin.initialize();
  });
  after(async () => {
    await plugin.dispose();
    await fake.stop();
  });

  test("start sets the webhook with its secret; updates POSTed with the secret are published, others refused", async () => {
    const started = await plugin.peer.request<{ webhook_listener: string; mode: string }>("channel.start", {
      kind: "telegram",
    });
    assert.equal(started.mode, "webhook");
    const set = await fake.next((c) => c.method === "setWebhook");
    assert.equal(set.params.url, "https://bot.example.org/telegram/hook");
    assert.equal(set.params.secret_token, SECRET);
    const listener = started.webhook_listener;
    assert.match(listener, /^http:\/\/127\.0\.0\.1:\d+\/telegram\/hook$/);

    const forged = {
      update_id: 1,
      message: { message_id: 1, date: 1, chat: PRIVATE, from: ALICE, text: "forged" },
    };
    const post = (headers: Record<string, string>, body: unknown = forged) =>
      fetch(listener, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    assert.equal((await post({})).status, 401);
    assert.equal(
      (await post({ "x-telegram-bot-api-secret-token": "wrong-secret-of-the-same-len!!!!" })).status,
      401,
    );
    assert.equal((await fetch(listener)).status, 405);
    assert.equal(plugin.published.length, 0);

    // Telegram itself delivers to the public URL; the fake posts to the local listener instead.
    fake.webhookOf("first_bot")!.url = listener;
    fake.userSends("first_bot", { chat: PRIVATE, from: ALICE, text: "via webhook" });
    const [published] = await plugin.waitPublished(1);
    assert.equal(published!.event.payload.text, "via webhook");
    assert.equal(plugin.stderr.includes(SECRET), false, "the webhook secret is redacted");
    assert.equal(plugin.stderr.includes(TOKEN_A), false);
  });
});
