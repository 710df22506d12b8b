import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Event } from "nexo-plugin-sdk";
import { LoopbackChannel } from "../src/channel.js";
import {
  isLoopbackHost,
  LoopbackConfigError,
  LoopbackTokenRequiredError,
  readLoopbackConfig,
} from "../src/config.js";
import { type DeliveredMessage, outboundFromEventPayload, parseInboundPost } from "../src/messages.js";
import { OutboxFullError, PostOffice, UnknownRecipientError } from "../src/post-office.js";

function message(to: string, text: string): DeliveredMessage {
  return { message_id: `m-${text}`, to, kind: "text", text, sent_at_unix: 1 };
}

describe("readLoopbackConfig", () => {
  test("defaults: 127.0.0.1, a free port, no token, the state dir's endpoint file", () => {
    assert.deepEqual(readLoopbackConfig({ NEXO_STATE_DIR: "/state" }), {
      host: "127.0.0.1",
      port: 0,
      token: undefined,
      outboxLimit: 64,
      retryAfterSecs: 2,
      maxWaitMs: 30_000,
      endpointFile: "/state/endpoint.json",
      pairingTtlMs: 60_000,
      bots: new Map([["echo@bot", "echo"]]),
    });
    assert.deepEqual(
      readLoopbackConfig({ LOOPBACK_BOTS: "a@bot=alpha, b.c@bot=beta", LOOPBACK_PAIRING_TTL_MS: "500" }),
      {
        ...readLoopbackConfig({}),
        bots: new Map([
          ["a@bot", "alpha"],
          ["b.c@bot", "beta"],
        ]),
        pairingTtlMs: 500,
      },
    );
    assert.equal(readLoopbackConfig({}).endpointFile, undefined);
    assert.equal(
      readLoopbackConfig({ LOOPBACK_ENDPOINT_FILE: "/x.json", NEXO_STATE_DIR: "/s" }).endpointFile,
      "/x.json",
    );
  });

  test("each unusable value is named", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ LOOPBACK_PORT: "70000" }, "LOOPBACK_PORT"],
      [{ LOOPBACK_PORT: "eighty" }, "LOOPBACK_PORT"],
      [{ LOOPBACK_OUTBOX_LIMIT: "0" }, "LOOPBACK_OUTBOX_LIMIT"],
      [{ LOOPBACK_RETRY_AFTER_SECS: "1.5" }, "LOOPBACK_RETRY_AFTER_SECS"],
      [{ LOOPBACK_HOST: "example.com" }, "LOOPBACK_HOST"],
      [{ LOOPBACK_TOKEN: "short" }, "LOOPBACK_TOKEN"],
      [{ LOOPBACK_BOTS: "alice=persona" }, "LOOPBACK_BOTS"],
      [{ LOOPBACK_BOTS: "a@bot" }, "LOOPBACK_BOTS"],
      [{ LOOPBACK_PAIRING_TTL_MS: "10" }, "LOOPBACK_PAIRING_TTL_MS"],
    ];
    for (const [env, variable] of cases) {
      assert.throws(
        () => readLoopbackConfig(env),
        (error: unknown) => error instanceof LoopbackConfigError && error.variable === variable,
        variable,
      );
    }
  });

  test("a token is required off loopback only", () => {
    assert.throws(() => readLoopbackConfig({ LOOPBACK_HOST: "0.0.0.0" }), LoopbackTokenRequiredError);
    assert.throws(() => readLoopbackConfig({ LOOPBACK_HOST: "::" }), LoopbackTokenRequiredError);
    assert.equal(readLoopbackConfig({ LOOPBACK_HOST: "::1" }).host, "::1");
    assert.equal(
      readLoopbackConfig({ LOOPBACK_HOST: "0.0.0.0", LOOPBACK_TOKEN: "x".repeat(16) }).token,
      "x".repeat(16),
    );
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"])
      assert.ok(isLoopbackHost(host), host);
    for (const host of ["0.0.0.0", "192.168.1.2", "::", "128.0.0.1", "localhost.example.com"]) {
      assert.ok(!isLoopbackHost(host), host);
    }
  });
});

describe("messages", () => {
  test("POST bodies and outbound event payloads", () => {
    assert.deepEqual(parseInboundPost({ from: "a.b@c", text: "hi", extra: 1 }), {
      from: "a.b@c",
      text: "hi",
    });
    assert.deepEqual(parseInboundPost({ from: "", text: " " }), {
      problems: ["from: must match /^[\\w.@:+-]{1,128}$/", "text: must be a non-empty string"],
    });
    assert.deepEqual(outboundFromEventPayload({ to: "a", text: "t", session_id: "s" }), {
      to: "a",
      text: "t",
    });
    assert.deepEqual(outboundFromEventPayload({ to: "a", body: "b" }), { to: "a", text: "b" });
    assert.deepEqual(outboundFromEventPayload({ to: "a", url: "u" }), { to: "a", url: "u" });
    assert.deepEqual(outboundFromEventPayload({ text: "t" }), {
      problem: "payload.to is not a non-empty string",
    });
    assert.deepEqual(outboundFromEventPayload({ to: "a" }), { problem: "payload has no text, body or url" });
  });
});

describe("PostOffice", () => {
  test("only known contacts receive; a full queue refuses; fetching empties it", async () => {
    const office = new PostOffice(2);
    assert.throws(() => office.deliver(message("x", "1")), UnknownRecipientError);
    office.touch("x");
    office.deliver(message("x", "1"));
    office.deliver(message("x", "2"));
    assert.throws(() => office.deliver(message("x", "3")), OutboxFullError);
    const fetched = await office.fetch("x", 0, () => true, new AbortController().signal);
    assert.deepEqual(
      fetched.map((m) => m.text),
      ["1", "2"],
    );
    assert.equal(office.queued("x"), 0);
  });

  test("streams take precedence, every open stream gets a copy, a gone stream is skipped", () => {
    const office = new PostOffice(5);
    const a: string[] = [];
    const b: string[] = [];
    office.subscribe("x", (m) => a.push(m.text!) > 0);
    const unsubscribeB = office.subscribe("x", (m) => b.push(m.text!) > 0);
    office.deliver(message("x", "both"));
    unsubscribeB();
    office.deliver(message("x", "only a"));
    assert.deepEqual(a, ["both", "only a"]);
    assert.deepEqual(b, ["both"]);

    const gone = new PostOffice(5);
    gone.subscribe("y", () => false);
    gone.deliver(message("y", "kept"));
    assert.equal(gone.queued("y"), 1, "a stream that is gone does not swallow the message");
    const late: string[] = [];
    gone.subscribe("y", (m) => late.push(m.text!) > 0);
    assert.deepEqual(late, ["kept"], "a new stream gets what was queued");
  });

  test("a long-poll whose client left does not take the message; abort and close end waits", async () => {
    const office = new PostOffice(5);
    const left = office.fetch("x", 10_000, () => false, new AbortController().signal);
    const present = office.fetch("x", 10_000, () => true, new AbortController().signal);
    office.deliver(message("x", "for whoever is there"));
    assert.deepEqual(await left, []);
    assert.deepEqual(
      (await present).map((m) => m.text),
      ["for whoever is there"],
    );

    const abort = new AbortController();
    const aborted = office.fetch("x", 10_000, () => true, abort.signal);
    abort.abort();
    assert.deepEqual(await aborted, []);
    const closing = office.fetch("x", 10_000, () => true, new AbortController().signal);
    office.close();
    assert.deepEqual(await closing, []);
    assert.throws(() => office.deliver(message("x", "after close")), UnknownRecipientError);
  });
});

describe("LoopbackChannel.deliverEvent", () => {
  test("replies for other topics, other instances or without a recipient are dropped and counted", async () => {
    const logs: string[] = [];
    const channel = new LoopbackChannel({
      kind: "loopback",
      env: {},
      publish: async () => undefined,
      reportPairing: async () => undefined,
      log: (line) => logs.push(line),
    });
    const event = (payload: Record<string, unknown>): Event => ({ topic: "t", source: "s", payload });
    channel.deliverEvent("plugin.outbound.loopback", event({ to: "a", text: "not started" }));
    await channel.start("desk");
    try {
      channel.deliverEvent("plugin.outbound.loopbackx", event({ to: "a", text: "x" }));
      channel.deliverEvent("plugin.outbound.loopback.other", event({ to: "a", text: "x" }));
      channel.deliverEvent("plugin.outbound.loopback.desk", event({ text: "x" }));
      assert.equal(channel.droppedEvents, 4);
      assert.match(logs.join("\n"), /not started/);
      assert.match(logs.join("\n"), /not an outbound topic of this channel/);
      assert.match(logs.join("\n"), /instance "other" is not the running one/);
      assert.match(logs.join("\n"), /payload\.to is not a non-empty string/);
    } finally {
      await channel.stop();
    }
  });
});
