/**
 * The Slack plugin on its own, driven over the plugin contract by a test host (a real child
 * process) against the fake Slack: the credential persister (validate, probe by auth.test,
 * persist, rotation while connected — a refused token keeps the running app), the Events API mode
 * (signed requests only, url_verification, an event published), the outbound refusals, and the
 * inbound rules (decideInbound) without any I/O.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
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
import { commandText, decideInbound } from "../src/inbound.js";
import { FakeSlack } from "./fake-slack.js";

const PLUGIN = "../../packages/channels/slack";
const A = {
  botToken: "xoxb-1-first-abcdefghij",
  appToken: "xapp-1-A1-first-abcdefghij",
  userId: "UBOTA",
  botId: "BA",
  name: "first_app",
};
const B = {
  botToken: "xoxb-2-second-abcdefghij",
  appToken: "xapp-1-A2-second-abcdefghij",
  userId: "UBOTB",
  botId: "BB",
  name: "second_app",
};

function rejectsWith(cls: abstract new (...args: never[]) => RpcError, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    if (pattern) assert.match((error as Error).message, pattern);
    return true;
  };
}

describe("slack plugin: credentials, Socket Mode and rotation", () => {
  const fake = new FakeSlack();
  let plugin: PluginProcess;
  const credential = (method: string, payload: Record<string, unknown>) =>
    plugin.peer.request<Record<string, unknown>>(`channel.credentials.${method}`, {
      kind: "slack",
      instance: null,
      payload,
      metadata: {},
    });

  before(async () => {
    await fake.start();
    fake.addBot(A);
    fake.addBot(B);
    plugin = await PluginProcess.start(PLUGIN, {
      env: { SLACK_API_URL: fake.apiUrl, SLACK_ALLOWED_USERS: "UALICE", SLACK_SEND_WAIT_MS: "2000" },
    });
  });
  after(async () => {
    await plugin.dispose();
    await fake.stop();
  });

  test("initialize advertises the credential persister; without a token channel.start is -33002", async () => {
    const reply = await plugin.initialize();
    assert.deepEqual(reply.channel_features, ["credentials"]);
    await assert.rejects(
      plugin.peer.request("channel.start", { kind: "slack", instance: null }),
      rejectsWith(ChannelAuthenticationError, /no bot token/),
    );
    // Every method about another kind is refused before it can act on Slack.
    for (const [method, params] of [
      ["channel.start", { kind: "telegram", instance: null }],
      ["channel.stop", { kind: "telegram" }],
      ["channel.send_outbound", { kind: "telegram", msg: { kind: "text", to: "C1", body: "hi" } }],
      [
        "channel.credentials.persist",
        { kind: "telegram", instance: null, payload: { bot_token: A.botToken }, metadata: {} },
      ],
    ] as const)
      await assert.rejects(
        plugin.peer.request(method, params),
        rejectsWith(ChannelUnsupportedError, /serves the "slack" channel, not "telegram"/),
        method,
      );
  });

  test("validate checks the shapes, probe asks auth.test, persist stores the tokens (0600)", async () => {
    assert.equal((await credential("validate", { bot_token: "xoxp-user-token" })).valid, false);
    assert.equal((await credential("validate", { bot_token: A.botToken, app_token: "nope" })).valid, false);
    assert.deepEqual(await credential("validate", { bot_token: A.botToken, app_token: A.appToken }), {
      valid: true,
    });
    const refused = await credential("probe", { bot_token: "xoxb-9-unknown-abcdefghij" });
    assert.equal(refused.reason_code, "auth_failed");
    assert.deepEqual(await credential("probe", { bot_token: A.botToken }), {
      probed: true,
      healthy: true,
      reason_code: "ok",
      detail: "authenticated as @first_app in Fake Team",
    });
    assert.deepEqual(await credential("persist", { bot_token: A.botToken, app_token: A.appToken }), {
      ok: true,
    });
    const file = join(plugin.stateDir, "credentials", "_default.json");
    assert.equal(JSON.parse(readFileSync(file, "utf8")).bot_token, A.botToken);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  test("starts by Socket Mode with the registered tokens; a new pair reconnects; a refused one changes nothing", async () => {
    const started = await plugin.peer.request<Record<string, unknown>>("channel.start", {
      kind: "slack",
      instance: null,
    });
    assert.equal(started.bot_user_id, A.userId);
    assert.equal(started.mode, "socket");
    await fake.until(() => fake.connected === 1, "the first app's socket");

    await assert.rejects(
      credential("persist", { bot_token: "xoxb-9-unknown-abcdefghij", app_token: A.appToken }),
    );
    assert.equal(
      JSON.parse(readFileSync(join(plugin.stateDir, "credentials", "_default.json"), "utf8")).bot_token,
      A.botToken,
    );

    assert.deepEqual(await credential("persist", { bot_token: B.botToken, app_token: B.appToken }), {
      ok: true,
    });
    await plugin.stderrMatch(/connected as @second_app/, 30_000);
    await fake.next((c) => c.method === "apps.connections.open" && c.token === B.appToken);
    fake.pushEvent({
      type: "message",
      channel_type: "im",
      channel: "D0ALICE",
      user: "UALICE",
      text: "after the rotation",
      ts: "1700000001.000100",
    });
    const [published] = await plugin.waitPublished(1, 30_000);
    assert.equal(published!.event.payload.text, "after the rotation");
    assert.equal(published!.event.payload.contact, "D0ALICE");
    assert.doesNotMatch(plugin.stderr, /xoxb-|xapp-/, "no token in the plugin's log");
  });

  test("outbound: a conversation the app never heard from, a non-id and a custom message are refused", async () => {
    const send = (msg: Record<string, unknown>) =>
      plugin.peer.request("channel.send_outbound", { kind: "slack", msg });
    await assert.rejects(
      send({ kind: "text", to: "C0STRANGER", body: "hi" }),
      rejectsWith(ChannelRecipientError, /C0STRANGER/),
    );
    await assert.rejects(
      send({ kind: "text", to: "#general", body: "hi" }),
      rejectsWith(ChannelRecipientError, /not a Slack conversation/),
    );
    await assert.rejects(
      send({ kind: "custom", to: "D0ALICE", payload: {} }),
      rejectsWith(ChannelUnsupportedError),
    );
    const sent = await send({ kind: "text", to: "D0ALICE", body: "hello back" });
    assert.ok(sent);
    await fake.next(
      (c) => c.method === "chat.postMessage" && c.params.text === "hello back" && c.token === B.botToken,
    );
  });
});

describe("slack plugin: the Events API mode", () => {
  const fake = new FakeSlack();
  const SECRET = "0123456789abcdef0123456789abcdef";
  let plugin: PluginProcess;
  let listener = "";
  const signed = (body: string, secret = SECRET) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
    return fetch(listener, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": signature,
      },
      body,
    });
  };

  before(async () => {
    await fake.start();
    fake.addBot(A);
    plugin = await PluginProcess.start(PLUGIN, {
      env: {
        SLACK_API_URL: fake.apiUrl,
        SLACK_MODE: "events",
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_EVENTS_PORT: "0",
        SLACK_BOT_TOKEN: A.botToken,
        SLACK_ALLOWED_USERS: "*",
      },
    });
    await plugin.initialize();
    const started = await plugin.peer.request<{ events_listener: string; mode: string }>("channel.start", {
      kind: "slack",
      instance: null,
    });
    assert.equal(started.mode, "events");
    listener = started.events_listener;
    assert.match(listener, /^http:\/\/127\.0\.0\.1:\d+\/slack\/events$/, "loopback by default");
  });
  after(async () => {
    await plugin.dispose();
    await fake.stop();
  });

  test("answers url_verification, refuses an unsigned or wrongly signed request, publishes a signed event", async () => {
    const challenge = await signed(
      JSON.stringify({ type: "url_verification", challenge: "c-123", token: "t" }),
    );
    assert.equal(challenge.status, 200);
    assert.match(await challenge.text(), /c-123/);
    const event = JSON.stringify({
      type: "event_callback",
      team_id: "T0FAKE",
      api_app_id: "A0FAKE",
      event_id: "Ev1",
      event_time: 1,
      event: {
        type: "message",
        channel_type: "im",
        channel: "D0BOB",
        user: "UBOB",
        text: "over http",
        ts: "1700000002.000100",
      },
    });
    assert.equal((await signed(event, "not-the-secret-0123456789abcdef")).status, 401);
    assert.equal(
      (
        await fetch(listener, {
          method: "POST",
          body: event,
          headers: { "content-type": "application/json" },
        })
      ).status,
      401,
    );
    assert.equal((await signed(event)).status, 200);
    const [published] = await plugin.waitPublished(1, 30_000);
    assert.equal(published!.event.payload.text, "over http");
    assert.equal(plugin.published.length, 1, "the refused requests published nothing");
  });
});

describe("slack inbound rules", () => {
  const me = { userId: "UBOT", botId: "BBOT" };
  const everyone = Allowlist.parse("*");
  const at = (
    event: Record<string, unknown>,
    channels: "mention" | "all" | "off" = "mention",
    allowed = everyone,
  ) =>
    decideInbound({ type: "message", ts: "1.000100", user: "UALICE", ...event }, me, {
      allowedUsers: allowed,
      channels,
    });

  test("who and what is answered", () => {
    assert.ok("accept" in at({ channel: "D1", channel_type: "im", text: "hi" }));
    assert.ok("ignore" in at({ channel: "D1", channel_type: "im", text: "hi", bot_id: "B2" }), "bots");
    assert.ok("ignore" in at({ channel: "D1", channel_type: "im", text: "hi", user: "UBOT" }), "itself");
    assert.ok(
      "ignore" in at({ channel: "D1", channel_type: "im", text: "hi", subtype: "message_changed" }),
      "edits",
    );
    assert.ok(
      "accept" in
        at({
          channel: "D1",
          channel_type: "im",
          text: "",
          subtype: "file_share",
          files: [{ url_private_download: "https://files.slack.com/x" }],
        }),
    );
    assert.ok(
      "ignore" in at({ channel: "D1", channel_type: "im", text: "hi" }, "mention", Allowlist.parse("UOTHER")),
      "not allowed",
    );
    assert.ok(
      "ignore" in at({ channel: "C1", channel_type: "channel", text: "hi" }),
      "a plain channel post in mention mode",
    );
    assert.ok("ignore" in at({ channel: "C1", type: "app_mention", text: "<@UBOT> hi" }, "off"));
    assert.ok(
      "ignore" in at({ channel: "C1", type: "app_mention", text: "<@UBOT> hi" }, "all"),
      "all mode answers the message event",
    );
    assert.ok("accept" in at({ channel: "C1", channel_type: "channel", text: "hi" }, "all"));
  });

  test("threads are conversations; the mention is taken out", () => {
    const mention = at({ channel: "C1", type: "app_mention", text: "<@UBOT>  deploy   now", ts: "5.000100" });
    assert.ok("accept" in mention);
    assert.equal(mention.accept.contact, "C1:5.000100", "a post in a channel starts its thread");
    assert.equal(mention.accept.text, "deploy now");
    const inThread = at({
      channel: "C1",
      type: "app_mention",
      text: "<@UBOT> again",
      ts: "6.000100",
      thread_ts: "5.000100",
    });
    assert.ok("accept" in inThread && inThread.accept.contact === "C1:5.000100");
    const dm = at({ channel: "D1", channel_type: "im", text: "hi", ts: "7.000100" });
    assert.ok(
      "accept" in dm && dm.accept.contact === "D1",
      "a direct message outside threads is one conversation",
    );
  });

  test("slash commands map onto /new and /help", () => {
    assert.equal(commandText("/new", ""), "/new");
    assert.equal(commandText("/HELP", "whatever"), "/help");
    assert.equal(commandText("/nexo", " New "), "/new");
    assert.equal(commandText("/ask", "what is the time?"), "what is the time?");
  });
});
