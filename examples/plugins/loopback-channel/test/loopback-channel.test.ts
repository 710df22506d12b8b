import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  ChannelCode,
  ChannelConnectionError,
  ChannelRateLimitedError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  type RpcError,
} from "@nexo/wire";
import { plugin as schemas } from "@nexo/wire/schemas";
import { PluginProcess } from "../../test-helpers/plugin-process.js";
import { SseClient } from "./sse-client.js";

interface StartReply {
  ok: boolean;
  url: string;
  host: string;
  port: number;
  instance: string | null;
  token_required: boolean;
}

function rejectsWith<E extends RpcError>(
  cls: abstract new (...args: never[]) => E,
  check?: (error: E) => void,
) {
  return (error: unknown) => {
    assert.ok(error instanceof cls, `expected ${cls.name}, got ${String(error)}`);
    check?.(error);
    return true;
  };
}

describe("loopback channel end to end over real HTTP", () => {
  let plugin: PluginProcess;
  let base: string;
  const sendOutbound = (msg: Record<string, unknown>) =>
    plugin.peer.request<{ message_id: string; sent_at_unix: number }>("channel.send_outbound", {
      kind: "loopback",
      msg,
    });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  before(async () => {
    plugin = await PluginProcess.start("loopback-channel", {
      env: { LOOPBACK_OUTBOX_LIMIT: "2", LOOPBACK_RETRY_AFTER_SECS: "7" },
    });
    const reply = await plugin.initialize();
    assert.equal(reply.tools, undefined);
  });
  after(async () => {
    await plugin.dispose();
  });

  test("channel.start listens on a chosen port and reports it in the result, the log and a file", async () => {
    const started = await plugin.peer.request<StartReply>("channel.start", {
      kind: "loopback",
      instance: null,
    });
    assert.ok(schemas.ChannelStartResultSchema.safeParse(started).success);
    assert.equal(started.ok, true);
    assert.equal(started.host, "127.0.0.1");
    assert.ok(started.port > 0);
    assert.equal(started.url, `http://127.0.0.1:${started.port}`);
    assert.equal(started.token_required, false);
    base = started.url;
    await plugin.stderrMatch(new RegExp(`loopback: listening on http://127\\.0\\.0\\.1:${started.port}`));
    const endpoint = JSON.parse(readFileSync(join(plugin.stateDir, "endpoint.json"), "utf8"));
    assert.equal(endpoint.url, base);
    assert.equal(endpoint.kind, "loopback");
    assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { ok: true });
  });

  test("starting again is idempotent; a second instance is -33005", async () => {
    const again = await plugin.peer.request<StartReply>("channel.start", { kind: "loopback" });
    assert.equal(again.url, base);
    await assert.rejects(
      plugin.peer.request("channel.start", { kind: "loopback", instance: "team_b" }),
      rejectsWith(ChannelUnsupportedError, (e) => assert.equal(e.feature, "multiple instances")),
    );
    await assert.rejects(
      plugin.peer.request("channel.start", { kind: "slack" }),
      rejectsWith(ChannelUnsupportedError),
    );
  });

  test("a POSTed message becomes a broker.publish on plugin.inbound.loopback", async () => {
    const response = await post({ from: "alice", text: "hello nexo" });
    assert.equal(response.status, 202);
    const receipt = (await response.json()) as { message_id: string; timestamp: string };
    const [published] = await plugin.waitPublished(1);
    assert.ok(schemas.BrokerPublishParamsSchema.safeParse(published).success, JSON.stringify(published));
    assert.equal(published!.topic, "plugin.inbound.loopback");
    assert.equal(published!.event.topic, "plugin.inbound.loopback");
    assert.equal(published!.event.source, "loopback");
    assert.deepEqual(published!.event.payload, {
      from: "alice",
      text: "hello nexo",
      message_id: receipt.message_id,
      timestamp: receipt.timestamp,
    });
    assert.ok(Math.abs(Date.parse(receipt.timestamp) - Date.now()) < 5_000);
  });

  test("bad requests get a JSON error and publish nothing", async () => {
    const cases: Array<[Promise<Response>, number, RegExp]> = [
      [post("{not json"), 400, /not JSON/],
      [post({ from: "alice" }), 400, /text/],
      [post({ from: "two words", text: "x" }), 400, /from/],
      [post([1, 2]), 400, /JSON object/],
      [post({ from: "alice", text: "x".repeat(70_000) }), 413, /larger than/],
      [fetch(`${base}/nowhere`), 404, /no route/],
      [fetch(`${base}/messages`, { method: "DELETE" }), 405, /only accepts GET, POST/],
      [fetch(`${base}/messages?to=a%20b`), 400, /contact id/],
      [fetch(`${base}/messages?to=alice&timeout=soon`), 400, /timeout/],
    ];
    for (const [request, status, pattern] of cases) {
      const response = await request;
      assert.equal(response.status, status);
      const body = (await response.json()) as { error: string };
      assert.match(body.error, pattern);
    }
    assert.equal(plugin.published.length, 1, "only the valid message of the previous test");
  });

  test("channel.send_outbound reaches an open SSE stream", async () => {
    const stream = await SseClient.open(`${base}/stream?to=alice`);
    assert.match(stream.contentType ?? "", /^text\/event-stream/);
    const ack = await sendOutbound({ kind: "text", to: "alice", body: "hi alice" });
    assert.ok(schemas.ChannelSendOutboundResultSchema.safeParse(ack).success);
    assert.ok(Math.abs(ack.sent_at_unix - Date.now() / 1000) < 5);
    const event = await stream.message(0);
    assert.equal(event.id, ack.message_id);
    assert.deepEqual(JSON.parse(event.data), {
      message_id: ack.message_id,
      to: "alice",
      kind: "text",
      text: "hi alice",
      sent_at_unix: ack.sent_at_unix,
    });

    const media = await sendOutbound({
      kind: "media",
      to: "alice",
      url: "https://example.com/cat.png",
      caption: "cat",
    });
    assert.deepEqual(JSON.parse((await stream.message(1)).data), {
      message_id: media.message_id,
      to: "alice",
      kind: "media",
      url: "https://example.com/cat.png",
      caption: "cat",
      sent_at_unix: media.sent_at_unix,
    });
    stream.close();
  });

  test("a broker.event on plugin.outbound.loopback is delivered too", async () => {
    const stream = await SseClient.open(`${base}/stream?to=alice`);
    await plugin.peer.notify("broker.event", {
      topic: "plugin.outbound.loopback",
      event: {
        id: "01940000-0000-0000-0000-000000000001",
        timestamp: new Date().toISOString(),
        topic: "plugin.outbound.loopback",
        source: "agent.helper",
        session_id: null,
        payload: { to: "alice", text: "from the broker" },
      },
    });
    const event = JSON.parse((await stream.message(0)).data) as { text: string; to: string };
    assert.equal(event.text, "from the broker");
    // A reply for someone unknown cannot be answered with an error: it is logged and dropped.
    await plugin.peer.notify("broker.event", {
      topic: "plugin.outbound.loopback",
      event: {
        topic: "plugin.outbound.loopback",
        source: "agent.helper",
        payload: { to: "ghost", text: "x" },
      },
    });
    await plugin.stderrMatch(/reply on plugin\.outbound\.loopback dropped \(1 so far\): .*"ghost"/);
    stream.close();
  });

  test("long-poll: queued replies at once, the next one while waiting, [] on timeout", async () => {
    assert.equal((await post({ from: "bob", text: "anyone?" })).status, 202);
    const queued = await sendOutbound({ kind: "text", to: "bob", body: "queued for bob" });
    const first = (await (await fetch(`${base}/messages?to=bob&timeout=0`)).json()) as {
      messages: Array<{ message_id: string; text: string }>;
    };
    assert.deepEqual(
      first.messages.map((m) => [m.message_id, m.text]),
      [[queued.message_id, "queued for bob"]],
    );

    const waiting = fetch(`${base}/messages?to=bob&timeout=5000`);
    const started = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const sent = await sendOutbound({ kind: "text", to: "bob", body: "while you waited" });
    const second = (await (await waiting).json()) as {
      messages: Array<{ message_id: string; text: string }>;
    };
    assert.deepEqual(
      second.messages.map((m) => m.message_id),
      [sent.message_id],
    );
    assert.ok(Date.now() - started < 4_000, "answered when the reply came, not at the timeout");

    const emptyStart = Date.now();
    const empty = (await (await fetch(`${base}/messages?to=bob&timeout=300`)).json()) as {
      messages: unknown[];
    };
    assert.deepEqual(empty.messages, []);
    assert.ok(Date.now() - emptyStart >= 250);
  });

  test("an unknown recipient is -33003 naming it", async () => {
    await assert.rejects(
      sendOutbound({ kind: "text", to: "nobody", body: "hello?" }),
      rejectsWith(ChannelRecipientError, (e) => {
        assert.equal(e.code, ChannelCode.recipientInvalid);
        assert.equal(e.recipient, "nobody");
        assert.match(e.reason, /no loopback client/);
      }),
    );
  });

  test("a full outbox is -33004 with retry_after_secs, and fetching frees it", async () => {
    assert.equal((await post({ from: "carol", text: "I never read replies" })).status, 202);
    await sendOutbound({ kind: "text", to: "carol", body: "1" });
    await sendOutbound({ kind: "text", to: "carol", body: "2" });
    await assert.rejects(
      sendOutbound({ kind: "text", to: "carol", body: "3" }),
      rejectsWith(ChannelRateLimitedError, (e) => {
        assert.equal(e.code, ChannelCode.rateLimited);
        assert.equal(e.retryAfterSecs, 7);
        assert.deepEqual(e.data, { retry_after_secs: 7, recipient: "carol" });
      }),
    );
    const fetched = (await (await fetch(`${base}/messages?to=carol&timeout=0`)).json()) as {
      messages: Array<{ text: string }>;
    };
    assert.deepEqual(
      fetched.messages.map((m) => m.text),
      ["1", "2"],
    );
    await sendOutbound({ kind: "text", to: "carol", body: "3" });
  });

  test("a custom message is -33005", async () => {
    await assert.rejects(
      sendOutbound({ kind: "custom", to: "alice", blocks: [] }),
      rejectsWith(ChannelUnsupportedError, (e) => assert.equal(e.feature, "custom messages")),
    );
  });

  test("channel.stop answers long-polls, ends streams, closes the listener; sending is then -33001", async () => {
    const stream = await SseClient.open(`${base}/stream?to=alice`);
    const waiting = fetch(`${base}/messages?to=alice&timeout=20000`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await plugin.peer.request("channel.stop", { kind: "loopback" }), { ok: true });
    await stream.ended;
    const answered = await waiting;
    assert.equal(answered.status, 200);
    assert.deepEqual(await answered.json(), { messages: [] }, "a waiting long-poll is answered, not cut");
    await assert.rejects(fetch(`${base}/healthz`));
    assert.equal(existsSync(join(plugin.stateDir, "endpoint.json")), false);
    await assert.rejects(
      sendOutbound({ kind: "text", to: "alice", body: "late" }),
      rejectsWith(ChannelConnectionError),
    );
    assert.deepEqual(await plugin.peer.request("channel.stop", { kind: "loopback" }), { ok: true });
  });

  test("an instance publishes on plugin.inbound.loopback.<instance>", async () => {
    const started = await plugin.peer.request<StartReply>("channel.start", {
      kind: "loopback",
      instance: "desk",
    });
    assert.equal(started.instance, "desk");
    base = started.url;
    const before = plugin.published.length;
    assert.equal((await post({ from: "dora", text: "hi desk" })).status, 202);
    const published = await plugin.waitPublished(before + 1);
    assert.equal(published.at(-1)!.topic, "plugin.inbound.loopback.desk");
  });

  test("shutdown with a stream still open: acknowledged, and the process exits by itself", async () => {
    const stream = await SseClient.open(`${base}/stream?to=dora`);
    const { reply, exit } = await plugin.shutdown();
    assert.deepEqual(reply, { ok: true });
    assert.deepEqual(exit, { code: 0, signal: null });
    await stream.ended;
    assert.deepEqual(plugin.problems, []);
  });
});
