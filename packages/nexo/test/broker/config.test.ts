import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BrokerConfigSchema, createBroker } from "../../src/broker/config.js";
import { BrokerError } from "../../src/broker/errors.js";
import { createEvent, decodeEvent, encodeEvent } from "../../src/broker/event.js";
import { withoutLocalDateMethods } from "../helpers/local-date-methods.js";

function issuesOf(config: unknown): string[] {
  const result = BrokerConfigSchema.safeParse(config);
  assert.equal(result.success, false, `expected ${JSON.stringify(config)} to be refused`);
  return (result.error?.issues ?? []).map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

describe("BrokerConfigSchema", () => {
  it("accepts the local broker and the NATS broker in their documented forms", () => {
    const valid: unknown[] = [
      { type: "local" },
      { type: "local", queue_depth: 4096 },
      { type: "nats", url: "nats://127.0.0.1:4222" },
      { type: "nats", url: "127.0.0.1:4222" },
      { type: "nats", url: "tls://nats.example.com:4222", creds_file: "secrets/nexo.creds", name: "nexo-a" },
      { type: "nats", servers: ["nats://a:4222", "nats://b:4222"], user: "nexo", pass: "pw" },
      { type: "nats", url: "nats://localhost", token: "t", queue_depth: 64 },
    ];
    for (const config of valid)
      assert.equal(BrokerConfigSchema.safeParse(config).success, true, JSON.stringify(config));
  });

  it("refuses unknown keys, since a typo must fail at boot", () => {
    assert.deepEqual(issuesOf({ type: "local", queue_dept: 5 }), [': Unrecognized key: "queue_dept"']);
    assert.match(
      issuesOf({ type: "nats", url: "nats://a:1", password: "x" })[0] ?? "",
      /Unrecognized key: "password"/,
    );
  });

  it("refuses an unknown type", () => {
    assert.match(issuesOf({ type: "redis" })[0] ?? "", /^type: /);
    assert.match(issuesOf({})[0] ?? "", /^type: /);
  });

  it("wants exactly one of url and servers", () => {
    assert.deepEqual(issuesOf({ type: "nats" }), ["url: give exactly one of url and servers"]);
    assert.deepEqual(issuesOf({ type: "nats", url: "nats://a:1", servers: ["nats://b:1"] }), [
      "servers: give exactly one of url and servers",
    ]);
    assert.match(issuesOf({ type: "nats", servers: [] })[0] ?? "", /^servers: /);
  });

  it("checks server addresses", () => {
    assert.match(
      issuesOf({ type: "nats", url: "http://a:4222" })[0] ?? "",
      /scheme "http" \(expected nats or tls\)/,
    );
    assert.match(issuesOf({ type: "nats", url: "nats://a:4222/x" })[0] ?? "", /must not have a path/);
    assert.match(issuesOf({ type: "nats", url: "nats://" })[0] ?? "", /url: /);
    assert.match(
      issuesOf({ type: "nats", servers: ["nats://ok:1", "ftp://x"] })[0] ?? "",
      /^servers\.1: has scheme "ftp"/,
    );
  });

  it("wants user and pass together, and one way to authenticate", () => {
    assert.deepEqual(issuesOf({ type: "nats", url: "a:1", user: "u" }), ["pass: user and pass go together"]);
    assert.deepEqual(issuesOf({ type: "nats", url: "a:1", pass: "p" }), ["user: user and pass go together"]);
    assert.deepEqual(issuesOf({ type: "nats", url: "a:1", user: "u", pass: "p", token: "t" }), [
      ": choose one way to authenticate, not user/pass and token",
    ]);
    assert.deepEqual(issuesOf({ type: "nats", url: "a:1", token: "t", creds_file: "c" }), [
      ": choose one way to authenticate, not token and creds_file",
    ]);
  });

  it("bounds queue_depth", () => {
    assert.match(issuesOf({ type: "local", queue_depth: 0 })[0] ?? "", /^queue_depth: /);
    assert.match(issuesOf({ type: "local", queue_depth: 1.5 })[0] ?? "", /^queue_depth: /);
    assert.match(issuesOf({ type: "local", queue_depth: 2_000_000 })[0] ?? "", /^queue_depth: /);
  });
});

describe("createBroker", () => {
  it("refuses an invalid config with invalid_config naming every problem", async () => {
    await assert.rejects(
      () => createBroker({ type: "nats", url: "http://x", user: "u" } as never),
      (error: unknown) => {
        assert.ok(error instanceof BrokerError);
        assert.equal(error.code, "invalid_config");
        assert.match(
          error.message,
          /^invalid broker config: url: has scheme "http".*; pass: user and pass go together$/,
        );
        return true;
      },
    );
  });
});

describe("event encoding", () => {
  const base = {
    id: "01940000-0000-0000-0000-000000000001",
    timestamp: "2026-05-01T00:00:00Z",
    topic: "a",
    source: "s",
  };
  const sizeOf = (payload: Record<string, unknown>) =>
    Buffer.byteLength(JSON.stringify({ ...base, payload }), "utf8");

  it("measures the limit in UTF-8 bytes, inclusive", () => {
    const payload = { text: "é".repeat(100) }; // 2 bytes each in UTF-8, 1 UTF-16 unit
    const bytes = sizeOf(payload);
    assert.equal(encodeEvent({ ...base, payload }, bytes, "a").json.length < bytes, true);
    const error = (() => {
      try {
        encodeEvent({ ...base, payload }, bytes - 1, "a");
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(error instanceof BrokerError && error.code === "too_large");
    assert.match(
      error.message,
      new RegExp(`event is ${bytes} bytes of JSON, more than the ${bytes - 1} allowed`),
    );
  });

  it("decodes what it encodes, and refuses what is not an event", () => {
    const { json, event } = encodeEvent({ ...base, payload: { n: 1 }, extra: [1] }, 10_000, "a");
    assert.deepEqual(decodeEvent(new TextEncoder().encode(json), "a"), event);
    for (const bad of ["[]", "null", "{}", '{"topic":"a"}', '"text"']) {
      assert.throws(
        () => decodeEvent(new TextEncoder().encode(bad), "a"),
        (error: unknown) => error instanceof BrokerError && error.code === "malformed_message",
        bad,
      );
    }
  });

  it("refuses a cyclic event as invalid_event", () => {
    const payload: Record<string, unknown> = {};
    payload.self = payload;
    assert.throws(
      () => encodeEvent({ ...base, payload }, 10_000, "a"),
      (error: unknown) =>
        error instanceof BrokerError &&
        error.code === "invalid_event" &&
        /cannot be encoded as JSON/.test(error.message),
    );
  });
});

describe("createEvent", () => {
  it("stamps the event now, as toISOString writes it, without the Date methods that reach ICU's time-zone data", () => {
    const before = Date.now();
    let stamped = "";
    withoutLocalDateMethods(() => {
      stamped = createEvent({ topic: "nexo.test", source: "test" }).timestamp;
    });
    assert.equal(new Date(stamped).toISOString(), stamped);
    assert.ok(Date.parse(stamped) >= before && Date.parse(stamped) <= Date.now());
  });
});
