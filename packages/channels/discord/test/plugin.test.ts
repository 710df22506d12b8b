/**
 * The Discord plugin on its own, driven over the plugin contract by a test host (a real child
 * process) against the fake Discord (REST + gateway): the credential persister (validate, probe by
 * GET /users/@me, persist, rotation while connected — a refused token keeps the running bot), the
 * gateway session (IDENTIFY with the intents, the slash commands registered, a dropped socket
 * RESUMEd with the events missed replayed), direct messages, a mention starting a thread, the
 * typing indicator, a long reply split at 2,000 characters, attachments only from the CDN, the
 * outbound refusals, and the inbound rules (decideInbound) without any I/O.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Allowlist } from "@nexo/channels-common";
import {
  ChannelAuthenticationError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  type RpcError,
} from "@nexo/wire";
import { PluginProcess } from "../../../../examples/plugins/test-helpers/plugin-process.js";
import { commandText, decideInbound, type InboundMessage, threadName } from "../src/inbound.js";
import { FakeDiscord, nextId } from "./fake-discord.js";

const PLUGIN = "../../packages/channels/discord";
const A = {
  token: "MTIwMDAwMDAwMDAwMDAwMDAwMQ.GaAaAa.first-token-abcdefghijklmnopqrstuv",
  id: "1200000000000000001",
  username: "first_bot",
  applicationId: "1200000000000000001",
};
const B = {
  token: "MTIwMDAwMDAwMDAwMDAwMDAwMg.GbBbBb.second-token-abcdefghijklmnopqrstu",
  id: "1200000000000000002",
  username: "second_bot",
  applicationId: "1200000000000000002",
};
const ALICE = { id: "1300000000000000001", username: "alice" };
const GUILD = "1400000000000000001";
const GENERAL = "1400000000000000002";
const DM = "1500000000000000001";

function rejectsWith(cls: abstract new (...args: never[]) => RpcError, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    if (pattern) assert.match((error as Error).message, pattern);
    return true;
  };
}

describe("discord plugin: credentials, the gateway session and rotation", () => {
  const fake = new FakeDiscord();
  const elsewhere = { hits: 0, url: "" };
  const other = createServer((_req, res) => {
    elsewhere.hits += 1;
    res.end("secret of another host");
  });
  let plugin: PluginProcess;
  const credential = (method: string, payload: Record<string, unknown>) =>
    plugin.peer.request<Record<string, unknown>>(`channel.credentials.${method}`, {
      kind: "discord",
      instance: null,
      payload,
      metadata: {},
    });
  const send = (msg: Record<string, unknown>) =>
    plugin.peer.request<{ message_id: string }>("channel.send_outbound", { kind: "discord", msg });

  before(async () => {
    await fake.start();
    fake.addBot(A);
    fake.addBot(B);
    fake.addGuild({
      id: GUILD,
      name: "Fake Guild",
      channels: [{ id: GENERAL, name: "general" }],
      threads: [],
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    elsewhere.url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    plugin = await PluginProcess.start(PLUGIN, {
      env: {
        DISCORD_API_URL: fake.apiUrl,
        DISCORD_CDN_URL: fake.url,
        DISCORD_ALLOWED_USERS: ALICE.id,
        DISCORD_SEND_WAIT_MS: "5000",
      },
    });
  });
  after(async () => {
    await plugin.dispose();
    await fake.stop();
    other.close();
  });

  test("initialize advertises the credential persister; without a token channel.start is -33002", async () => {
    const reply = await plugin.initialize();
    assert.deepEqual(reply.channel_features, ["credentials"]);
    await assert.rejects(
      plugin.peer.request("channel.start", { kind: "discord", instance: null }),
      rejectsWith(ChannelAuthenticationError, /no bot token/),
    );
  });

  test("validate checks the shape, probe asks GET /users/@me, persist stores the token (0600)", async () => {
    assert.equal((await credential("validate", { bot_token: "not a token" })).valid, false);
    assert.equal((await credential("validate", {})).valid, false);
    assert.deepEqual(await credential("validate", { bot_token: A.token }), { valid: true });
    const refused = await credential("probe", {
      bot_token: "MTIwMDAwMDAwMDAwMDAwMDAwOQ.GzZzZz.unknown-token-abcdefghijklmnopqrst",
    });
    assert.equal(refused.reason_code, "auth_failed");
    assert.deepEqual(await credential("probe", { bot_token: A.token }), {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: "authenticated as @first_bot",
    });
    assert.deepEqual(await credential("persist", { bot_token: A.token }), { ok: true });
    const file = join(plugin.stateDir, "credentials", "_default.json");
    assert.equal(JSON.parse(readFileSync(file, "utf8")).bot_token, A.token);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  test("starts on the gateway with the registered token: IDENTIFY, READY, the guild, /new and /help registered", async () => {
    const started = await plugin.peer.request<Record<string, unknown>>("channel.start", {
      kind: "discord",
      instance: null,
    });
    assert.equal(started.bot_user_id, A.id);
    assert.equal(started.application_id, A.applicationId);
    assert.equal(started.guilds, 1);
    const identify = fake.frames.find((f) => f.op === 2)!.d as { token: string; intents: number };
    assert.equal(identify.token, A.token);
    // GUILDS (1 << 0), GUILD_MESSAGES (1 << 9), DIRECT_MESSAGES (1 << 12), MESSAGE_CONTENT (1 << 15)
    assert.equal(identify.intents, (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15));
    const registered = await fake.next((c) => c.method === "PUT" && c.path.endsWith("/commands"));
    assert.deepEqual(
      (registered.body as unknown as Array<{ name: string }>).map((c) => c.name),
      ["new", "help"],
    );
  });

  test("a DM is published with a typing indicator; the reply, 4,500 characters, goes out in three pieces", async () => {
    fake.message({ channelId: DM, author: ALICE, content: "hello from the DM", bot: A });
    fake.message({
      channelId: DM,
      author: { id: "1300000000000000099", username: "mallory" },
      content: "me too",
      bot: A,
    });
    const [published] = await plugin.waitPublished(1, 30_000);
    assert.equal(published!.event.payload.text, "hello from the DM");
    assert.equal(published!.event.payload.contact, DM);
    assert.equal(published!.event.payload.chat_type, "direct");
    await fake.next((c) => c.method === "POST" && c.path === `/channels/${DM}/typing`);
    const long = Array.from({ length: 750 }, (_, i) => `w${String(i).padStart(4, "0")}`).join(" ");
    assert.equal(long.length, 4499);
    const sent = await send({ kind: "text", to: DM, body: long });
    assert.match(sent.message_id, /^\d+$/);
    const posts = fake.calls.filter((c) => c.method === "POST" && c.path === `/channels/${DM}/messages`);
    assert.equal(posts.length, 3);
    assert.ok(posts.every((p) => String(p.body.content).length <= 2000));
    assert.equal(posts.map((p) => p.body.content).join(" "), long);
    assert.deepEqual(posts[0]!.body.allowed_mentions, { parse: [] }, "the agent's text pings no one");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(plugin.published.length, 1, "the stranger's DM and the bot's own posts were not published");
  });

  test("a slash command from someone not allowed is refused privately and reaches nobody", async () => {
    const before = plugin.published.length;
    const command = fake.command({
      name: "new",
      channelId: DM,
      user: { id: "1300000000000000099", username: "mallory" },
      bot: A,
    });
    const refused = await fake.next(
      (c) => c.path === `/interactions/${command.id}/${command.token}/callback`,
    );
    assert.equal(refused.body.type, 4, "CHANNEL_MESSAGE_WITH_SOURCE");
    assert.equal((refused.body.data as { flags?: number }).flags, 64, "ephemeral: only the caller sees it");
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(plugin.published.length, before);
  });

  test("a mention in a channel starts a thread: the conversation is the thread, answered without a mention there", async () => {
    const before = plugin.published.length;
    const mention = fake.message({
      channelId: GENERAL,
      guildId: GUILD,
      author: ALICE,
      content: `<@${A.id}> status of the build?`,
      mentions: [A],
      bot: A,
    });
    fake.message({ channelId: GENERAL, guildId: GUILD, author: ALICE, content: "not for the bot", bot: A });
    const created = await fake.next((c) => c.path === `/channels/${GENERAL}/messages/${mention.id}/threads`);
    assert.equal(created.body.name, "status of the build?");
    const [first] = (await plugin.waitPublished(before + 1, 30_000)).slice(before);
    assert.equal(first!.event.payload.contact, mention.id, "a thread started from a message has its id");
    assert.equal(first!.event.payload.text, "status of the build?");
    assert.equal(first!.event.payload.chat_type, "channel");
    fake.message({
      channelId: String(mention.id),
      guildId: GUILD,
      author: ALICE,
      content: "and the tests?",
      bot: A,
    });
    const [second] = (await plugin.waitPublished(before + 2, 30_000)).slice(before + 1);
    assert.equal(second!.event.payload.contact, mention.id);
    assert.equal(second!.event.payload.text, "and the tests?");
    await send({ kind: "text", to: String(mention.id), body: "In the thread." });
    await fake.next(
      (c) => c.path === `/channels/${mention.id}/messages` && c.body.content === "In the thread.",
    );
  });

  test("attachments: from the CDN downloaded, from anywhere else never fetched", async () => {
    const before = plugin.published.length;
    fake.cdn.set("photo.jpg", Buffer.from("jpeg bytes"));
    fake.message({
      channelId: DM,
      author: ALICE,
      content: "two files",
      attachments: [
        {
          filename: "photo.jpg",
          url: `${fake.url}/attachments/photo.jpg`,
          size: 10,
          content_type: "image/jpeg",
        },
        { filename: "secret.txt", url: `${elsewhere.url}/secret.txt`, size: 22 },
      ],
      bot: A,
    });
    const [published] = (await plugin.waitPublished(before + 1, 30_000)).slice(before);
    const text = String(published!.event.payload.text);
    const path = /\[image "photo\.jpg" attached: (\S+) \(image\/jpeg/.exec(text)?.[1] ?? "";
    assert.ok(path.startsWith(join(plugin.stateDir, "media", "in", DM)), text);
    assert.equal(readFileSync(path, "utf8"), "jpeg bytes");
    assert.match(text, /\[file secret\.txt not downloaded: it is not on Discord's CDN\]/);
    assert.equal(elsewhere.hits, 0);
  });

  test("a dropped gateway socket is RESUMEd; the message sent meanwhile is replayed and published", async () => {
    const before = plugin.published.length;
    const session = fake.sessionIds.at(-1);
    fake.dropSockets();
    fake.message({ channelId: DM, author: ALICE, content: "while you were away", bot: A });
    await fake.until(() => fake.frames.some((f) => f.op === 6), "a RESUME (op 6)");
    const resume = fake.frames.find((f) => f.op === 6)!.d as {
      session_id: string;
      seq: number;
      token: string;
    };
    assert.equal(resume.session_id, session);
    assert.equal(resume.token, A.token);
    const [published] = (await plugin.waitPublished(before + 1, 30_000)).slice(before);
    assert.equal(published!.event.payload.text, "while you were away");
    await plugin.stderrMatch(/gateway session resumed/, 30_000);
    assert.equal(fake.frames.filter((f) => f.op === 2).length, 1, "resumed, not identified again");
  });

  test("rotation: a refused token changes nothing; a new one reconnects as the other bot", async () => {
    await assert.rejects(
      credential("persist", {
        bot_token: "MTIwMDAwMDAwMDAwMDAwMDAwOQ.GzZzZz.unknown-token-abcdefghijklmnopqrst",
      }),
    );
    assert.equal(
      JSON.parse(readFileSync(join(plugin.stateDir, "credentials", "_default.json"), "utf8")).bot_token,
      A.token,
    );
    assert.deepEqual(await credential("persist", { bot_token: B.token }), { ok: true });
    await plugin.stderrMatch(/connected as @second_bot/, 30_000);
    assert.ok(fake.frames.some((f) => f.op === 2 && (f.d as { token: string }).token === B.token));
    const before = plugin.published.length;
    fake.message({ channelId: DM, author: ALICE, content: "after the rotation", bot: B });
    const [published] = (await plugin.waitPublished(before + 1, 30_000)).slice(before);
    assert.equal(published!.event.payload.text, "after the rotation");
    await send({ kind: "text", to: DM, body: "from the second bot" });
    const posted = await fake.next((c) => c.body.content === "from the second bot");
    assert.equal(posted.token, B.token);
    assert.doesNotMatch(plugin.stderr, /GaAaAa|GbBbBb/, "no token in the plugin's log");
  });

  test("outbound: a channel the bot never heard from, a non-id, a custom message, a file outside the media dirs", async () => {
    await assert.rejects(
      send({ kind: "text", to: "1600000000000000001", body: "hi" }),
      rejectsWith(ChannelRecipientError, /1600000000000000001/),
    );
    await assert.rejects(
      send({ kind: "text", to: "#general", body: "hi" }),
      rejectsWith(ChannelRecipientError),
    );
    await assert.rejects(send({ kind: "custom", to: DM, payload: {} }), rejectsWith(ChannelUnsupportedError));
    await assert.rejects(
      send({ kind: "media", to: DM, url: "/etc/passwd" }),
      rejectsWith(ChannelUnsupportedError, /DISCORD_MEDIA_DIRS|outside/),
    );
  });
});

describe("discord inbound rules", () => {
  const me = { id: "1" };
  const everyone = Allowlist.parse("*");
  const config = {
    allowedUsers: everyone,
    allowedGuilds: everyone,
    channels: "mention" as "mention" | "all" | "off",
    threads: true,
  };
  const at = (message: Partial<InboundMessage>, overrides: Partial<typeof config> = {}) =>
    decideInbound(
      {
        id: nextId(),
        type: 0,
        channelId: "100",
        guildId: undefined,
        authorId: "2",
        authorIsBot: false,
        webhookId: undefined,
        content: "hi",
        mentionsMe: false,
        inThread: false,
        knownThread: false,
        attachments: [],
        ...message,
      },
      me,
      { ...config, ...overrides },
    );

  test("who and what is answered", () => {
    assert.ok("accept" in at({}), "a DM");
    assert.ok("ignore" in at({ authorId: "1" }), "itself");
    assert.ok("ignore" in at({ authorIsBot: true }), "bots");
    assert.ok("ignore" in at({ webhookId: "9" }), "webhooks");
    assert.ok("ignore" in at({ type: 7 }), "a join message");
    assert.ok("accept" in at({ type: 19 }), "a reply");
    assert.ok("ignore" in at({}, { allowedUsers: Allowlist.parse("3") }), "not allowed");
    assert.ok("ignore" in at({ guildId: "5" }), "a server post without a mention");
    assert.ok("accept" in at({ guildId: "5", mentionsMe: true }));
    assert.ok("ignore" in at({ guildId: "5", mentionsMe: true }, { allowedGuilds: Allowlist.parse("6") }));
    assert.ok("ignore" in at({ guildId: "5", mentionsMe: true }, { channels: "off" }));
    assert.ok("accept" in at({ guildId: "5" }, { channels: "all" }));
    assert.ok("accept" in at({ guildId: "5", inThread: true, knownThread: true }), "a thread the bot is in");
    assert.ok("ignore" in at({ guildId: "5", inThread: true }), "a thread the bot is not in");
    assert.ok("ignore" in at({ content: `<@1>` }), "only the mention: empty");
  });

  test("the mention is taken out; a channel mention starts a thread unless threads are off", () => {
    const mention = at({ guildId: "5", mentionsMe: true, content: "<@1>  deploy   now <@!1>" });
    assert.ok("accept" in mention);
    assert.equal(mention.accept.text, "deploy now");
    assert.equal(mention.accept.startThread, true);
    const off = at({ guildId: "5", mentionsMe: true }, { threads: false });
    assert.ok("accept" in off && !off.accept.startThread);
    const inThread = at({ guildId: "5", mentionsMe: true, inThread: true });
    assert.ok("accept" in inThread && !inThread.accept.startThread);
    assert.equal(threadName("first line\nsecond"), "first line");
    assert.equal(threadName("x".repeat(200)).length, 90);
  });

  test("slash commands map onto /new and /help", () => {
    assert.equal(commandText("new"), "/new");
    assert.equal(commandText("HELP"), "/help");
    assert.equal(commandText("ask"), undefined);
  });
});
