/**
 * The NATS broker against a real nats-server (see broker-nats-server.ts): the shared Broker suite,
 * then what only a network broker can show: two connections on one server, a server that goes
 * away and comes back, foreign messages, authentication.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connect } from "nats";
import { createBroker } from "../../src/broker/config.js";
import { BrokerError } from "../../src/broker/errors.js";
import { NatsBroker } from "../../src/broker/nats.js";
import type { Broker, BrokerReadiness } from "../../src/broker/types.js";
import { event, recorder, uniquePrefix, waitFor } from "./helpers.js";
import { findNatsServer, freePort, NatsServer } from "./nats-server.js";
import { brokerSuite } from "./suite.js";

let server: NatsServer | undefined;
const opened: Broker[] = [];

function natsUrl(): string {
  if (server === undefined) throw new Error("the nats-server did not start (see the error in before())");
  return server.url;
}

async function open(options: Partial<Parameters<typeof NatsBroker.connect>[0]> = {}): Promise<NatsBroker> {
  const broker = await NatsBroker.connect({ servers: natsUrl(), ...options });
  opened.push(broker);
  return broker;
}

before(async () => {
  server = await NatsServer.start();
});

after(async () => {
  await Promise.all(opened.map((broker) => broker.close({ drainTimeoutMs: 500 })));
  await server?.stop();
});

brokerSuite("NatsBroker", {
  create: (options) => open({ queueDepth: options?.queueDepth, name: "nexo-broker-suite" }),
});

async function brokerErrorOf(attempt: () => Promise<unknown>): Promise<BrokerError> {
  try {
    await attempt();
  } catch (error) {
    assert.ok(error instanceof BrokerError, `expected a BrokerError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a BrokerError");
}

describe("the test server helper", () => {
  it("fails with a clear message, never a skip, when nats-server is missing", () => {
    assert.throws(
      () => findNatsServer({ PATH: "/nonexistent-bin" }, ["/nonexistent/nats-server"]),
      /nats-server not found: .*apt-get install nats-server.*NATS_SERVER_BIN/,
    );
    assert.throws(
      () => findNatsServer({ NATS_SERVER_BIN: "/nonexistent/nats-server" }),
      /NATS_SERVER_BIN=\/nonexistent\/nats-server is not an executable file/,
    );
  });
});

describe("NatsBroker on a shared server", () => {
  it("two brokers (two connections) see each other's events", async () => {
    const a = await open({ name: "daemon-a" });
    const b = await open({ name: "daemon-b" });
    const p = uniquePrefix();
    const atA = recorder();
    const atB = recorder();
    const subscriptions = [a.subscribe(`${p}.to_a.>`, atA.handler), b.subscribe(`${p}.to_b.*`, atB.handler)];
    await Promise.all(subscriptions.map((s) => s.ready));
    b.publish(`${p}.to_a.x.y`, event(`${p}.to_a.x.y`, { from: "b", text: "¡hola!" }));
    a.publish(`${p}.to_b.z`, event(`${p}.to_b.z`, { from: "a" }));
    await waitFor(() => atA.events.length === 1 && atB.events.length === 1, "one event each way");
    assert.deepEqual(atA.events[0]?.payload, { from: "b", text: "¡hola!" });
    assert.deepEqual(atA.topics, [`${p}.to_a.x.y`]);
    assert.deepEqual(atB.events[0]?.payload, { from: "a" });
    // Each subscriber is also reached by its own connection's publishes.
    a.publish(`${p}.to_a.self`, event(`${p}.to_a.self`));
    await waitFor(() => atA.events.length === 2, "A's own event");
  });

  it("skips and reports messages that are not broker events, and keeps delivering", async () => {
    const broker = await open();
    const raw = await connect({ servers: natsUrl() });
    try {
      const p = uniquePrefix();
      const got = recorder();
      const errors: BrokerError[] = [];
      broker.onError((error) => errors.push(error));
      const subscription = broker.subscribe(`${p}.in`, got.handler, { name: "inbound" });
      await subscription.ready;
      const text = new TextEncoder();
      raw.publish(`${p}.in`, text.encode("not json"));
      raw.publish(`${p}.in`, text.encode(JSON.stringify({ topic: "x", source: "y" })));
      raw.publish(`${p}.in`, new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]));
      raw.publish(`${p}.in`, text.encode(JSON.stringify(event(`${p}.in`, { n: 1 }))));
      await raw.flush();
      await waitFor(() => got.events.length === 1, "the valid event after the garbage");
      assert.equal(broker.stats().malformed, 3);
      const malformed = errors.filter((e) => e.code === "malformed_message");
      assert.equal(malformed.length, 3);
      assert.equal(malformed[0]?.subscription, "inbound");
      assert.match(malformed[0]?.message ?? "", /not UTF-8 JSON/);
      assert.match(malformed[1]?.message ?? "", /not a broker event: id: /);
      assert.equal(subscription.delivered, 1);
    } finally {
      await raw.close();
    }
  });

  it("fails to connect with connect_failed when no server listens", async () => {
    const port = await freePort();
    const error = await brokerErrorOf(() =>
      NatsBroker.connect({ servers: `nats://user:secret@127.0.0.1:${port}`, connectTimeoutMs: 2000 }),
    );
    assert.equal(error.code, "connect_failed");
    assert.match(
      error.message,
      new RegExp(`cannot connect to NATS at nats://\\*\\*\\*@127\\.0\\.0\\.1:${port}`),
    );
    assert.doesNotMatch(error.message, /secret/, "credentials never reach the message");
  });

  it("is what createBroker builds for {type: nats}", async () => {
    const broker = await createBroker({ type: "nats", url: natsUrl(), name: "from-config", queue_depth: 8 });
    opened.push(broker);
    assert.ok(broker instanceof NatsBroker);
    assert.equal(broker.kind, "nats");
    assert.equal(broker.subscribe(`${uniquePrefix()}.x`, () => {}).queueDepth, 8);
    assert.equal(broker.readiness().ready, true);
    assert.match(broker.readiness().detail, /connected to 127\.0\.0\.1:\d+/);
  });

  it("refuses an unreadable creds file with invalid_config", async () => {
    const error = await brokerErrorOf(() =>
      createBroker(
        { type: "nats", url: natsUrl(), creds_file: "no/such.creds" },
        { configDir: "/nonexistent" },
      ),
    );
    assert.equal(error.code, "invalid_config");
    assert.match(error.message, /cannot read the NATS creds file \/nonexistent\/no\/such\.creds/);
  });
});

describe("NatsBroker authentication", () => {
  it("connects with user and pass, and refuses a wrong password", async () => {
    const secured = await NatsServer.start(["--user", "nexo", "--pass", "s3cret"]);
    try {
      const good = await createBroker({ type: "nats", url: secured.url, user: "nexo", pass: "s3cret" });
      const p = uniquePrefix();
      const got = recorder();
      await good.subscribe(`${p}.x`, got.handler).ready;
      good.publish(`${p}.x`, event(`${p}.x`));
      await waitFor(() => got.events.length === 1, "an event over the authenticated connection");
      await good.close();
      const error = await brokerErrorOf(() =>
        createBroker({ type: "nats", url: secured.url, user: "nexo", pass: "wrong" }),
      );
      assert.equal(error.code, "connect_failed");
      assert.match(error.message, /auth/i);
    } finally {
      await secured.stop();
    }
  });

  it("connects with a token", async () => {
    const secured = await NatsServer.start(["--auth", "t0ken"]);
    try {
      const broker = await createBroker({ type: "nats", servers: [secured.url], token: "t0ken" });
      assert.equal(broker.readiness().ready, true);
      await broker.close();
      const error = await brokerErrorOf(() =>
        createBroker({ type: "nats", url: secured.url, token: "nope" }),
      );
      assert.equal(error.code, "connect_failed");
    } finally {
      await secured.stop();
    }
  });
});

describe("NatsBroker when the server goes away", () => {
  it("reports not-ready while the server is down, refuses publishes, and recovers after a restart", async () => {
    const flaky = await NatsServer.start();
    const broker = await NatsBroker.connect({
      servers: flaky.url,
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
    try {
      const statuses: BrokerReadiness[] = [];
      broker.onStatus((status) => statuses.push(status));
      const p = uniquePrefix();
      const got = recorder();
      await broker.subscribe(`${p}.>`, got.handler).ready;
      broker.publish(`${p}.before`, event(`${p}.before`));
      await waitFor(() => got.events.length === 1, "an event before the outage");
      assert.equal(broker.readiness().ready, true);

      await flaky.stop();
      await waitFor(() => !broker.readiness().ready, "the broker to notice the server is gone");
      assert.equal(broker.readiness().state, "disconnected");
      assert.match(broker.readiness().detail, /reconnecting/);
      assert.equal(broker.stats().ready, false);
      const refused = (() => {
        try {
          broker.publish(`${p}.during`, event(`${p}.during`));
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      assert.ok(refused instanceof BrokerError && refused.code === "unavailable", String(refused));
      assert.equal(broker.stats().publishFailed, 1);

      await flaky.start();
      await waitFor(() => broker.readiness().ready, "the broker to reconnect", 15_000);
      assert.equal(broker.readiness().state, "connected");
      assert.deepEqual(
        statuses.map((s) => s.state),
        ["disconnected", "connected"],
      );
      // The client re-subscribed on its own: events flow again through the same subscription.
      broker.publish(`${p}.after`, event(`${p}.after`));
      await waitFor(() => got.events.length === 2, "an event after the restart");
      assert.deepEqual(got.topics, [`${p}.before`, `${p}.after`]);
    } finally {
      await broker.close({ drainTimeoutMs: 500 });
      await flaky.stop();
    }
  });

  it("closes promptly even while the server is down", async () => {
    const flaky = await NatsServer.start();
    const broker = await NatsBroker.connect({
      servers: flaky.url,
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    });
    await flaky.stop();
    await waitFor(() => !broker.readiness().ready, "the disconnect");
    const started = Date.now();
    await broker.close({ drainTimeoutMs: 300 });
    assert.ok(Date.now() - started < 3000, `close took ${Date.now() - started} ms`);
    assert.equal(broker.readiness().state, "closed");
  });
});
