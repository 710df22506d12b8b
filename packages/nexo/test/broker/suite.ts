/**
 * The behaviour every Broker must show, whatever carries the events. broker-local.test.ts and
 * broker-nats.test.ts run this same suite; a difference between the brokers is a failure here.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { validate as isUuid, version as uuidVersion } from "uuid";
import { BrokerError } from "../../src/broker/errors.js";
import { createEvent } from "../../src/broker/event.js";
import type { Broker, BrokerEvent, BrokerReadiness, Subscription } from "../../src/broker/types.js";
import { deferred, event, recorder, uniquePrefix, waitFor } from "./helpers.js";

export interface BrokerFixture {
  /** A fresh broker (for NATS, a fresh connection). The suite closes it. */
  create(options?: { queueDepth?: number }): Promise<Broker>;
}

function brokerErrorOf(fn: () => unknown): BrokerError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof BrokerError, `expected a BrokerError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a BrokerError");
}

export function brokerSuite(label: string, fixture: BrokerFixture): void {
  async function withBroker(
    body: (broker: Broker) => Promise<void>,
    options?: { queueDepth?: number },
  ): Promise<void> {
    const broker = await fixture.create(options);
    try {
      await body(broker);
    } finally {
      await broker.close({ drainTimeoutMs: 1000 });
    }
  }

  describe(`${label}: the Broker contract`, () => {
    it("delivers to an exact subscription only events on that topic", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const got = recorder();
        const subscription = broker.subscribe(`${p}.exact`, got.handler);
        await subscription.ready;
        broker.publish(`${p}.other`, event(`${p}.other`, { n: 1 }));
        broker.publish(`${p}.exact.deeper`, event(`${p}.exact.deeper`, { n: 2 }));
        broker.publish(`${p}.exac`, event(`${p}.exac`, { n: 3 }));
        broker.publish(`${p}.exact`, event(`${p}.exact`, { n: 4 }));
        await waitFor(() => got.events.length >= 1, "the exact event");
        assert.deepEqual(
          got.events.map((e) => e.payload.n),
          [4],
        );
        assert.deepEqual(got.topics, [`${p}.exact`]);
      }));

    it("delivers by * (one token) and > (one or more tokens)", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const star = recorder();
        const tail = recorder();
        const starC = recorder();
        const subscriptions = [
          broker.subscribe(`${p}.*`, star.handler),
          broker.subscribe(`${p}.>`, tail.handler),
          broker.subscribe(`${p}.*.c`, starC.handler),
        ];
        await Promise.all(subscriptions.map((s) => s.ready));
        for (const topic of [p, `${p}.a`, `${p}.a.c`, `${p}.a.b.c`, `${p}.b.c`, `${p}.b.d`]) {
          broker.publish(topic, event(topic));
        }
        // Sentinels: once a subscriber has its sentinel, everything published before it has arrived.
        broker.publish(`${p}.zz`, event(`${p}.zz`));
        broker.publish(`${p}.zz.c`, event(`${p}.zz.c`));
        await waitFor(
          () =>
            star.topics.includes(`${p}.zz`) &&
            tail.topics.includes(`${p}.zz.c`) &&
            starC.topics.includes(`${p}.zz.c`),
          "the sentinels",
        );
        assert.deepEqual(star.topics, [`${p}.a`, `${p}.zz`]);
        assert.deepEqual(tail.topics, [
          `${p}.a`,
          `${p}.a.c`,
          `${p}.a.b.c`,
          `${p}.b.c`,
          `${p}.b.d`,
          `${p}.zz`,
          `${p}.zz.c`,
        ]);
        assert.deepEqual(starC.topics, [`${p}.a.c`, `${p}.b.c`, `${p}.zz.c`]);
      }));

    it("delivers nothing after unsubscribe, not even what was already queued", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const gate = deferred();
        const seenByA: unknown[] = [];
        const b = recorder();
        const a = broker.subscribe(`${p}.t`, async (e) => {
          seenByA.push(e.payload.n);
          await gate.promise;
        });
        const bSubscription = broker.subscribe(`${p}.t`, b.handler, { name: "b" });
        await Promise.all([a.ready, bSubscription.ready]);
        broker.publish(`${p}.t`, event(`${p}.t`, { n: 1 }));
        await waitFor(() => seenByA.length === 1, "A's first event");
        broker.publish(`${p}.t`, event(`${p}.t`, { n: 2 }));
        await waitFor(() => a.queued === 1, "A's second event to wait in its queue");
        a.unsubscribe();
        a.unsubscribe(); // idempotent
        assert.equal(a.queued, 0);
        gate.resolve();
        broker.publish(`${p}.t`, event(`${p}.t`, { n: 3 }));
        await waitFor(() => b.events.length === 3, "B's three events");
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.deepEqual(seenByA, [1]);
        assert.deepEqual(
          broker.stats().subscriptions.map((s) => s.name),
          ["b"],
        );
      }));

    it("preserves publish order for each subscriber, even with a slow async handler", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const slow: number[] = [];
        const fast: number[] = [];
        const subscriptions = [
          broker.subscribe(`${p}.seq`, async (e) => {
            const n = e.payload.n as number;
            if (n % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
            slow.push(n);
          }),
          broker.subscribe(`${p}.*`, (e) => {
            fast.push(e.payload.n as number);
          }),
        ];
        await Promise.all(subscriptions.map((s) => s.ready));
        const count = 500;
        for (let n = 0; n < count; n++) broker.publish(`${p}.seq`, event(`${p}.seq`, { n }));
        await waitFor(() => slow.length === count && fast.length === count, "every event", 10_000);
        const expected = Array.from({ length: count }, (_, n) => n);
        assert.deepEqual(slow, expected);
        assert.deepEqual(fast, expected);
      }));

    it("bounds a stalled subscriber's queue, drops and counts the overflow, and others keep receiving", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const gate = deferred();
        const slowSeen: number[] = [];
        const fast = recorder();
        const slow = broker.subscribe(
          `${p}.load`,
          async (e) => {
            slowSeen.push(e.payload.n as number);
            await gate.promise;
          },
          { queueDepth: 4, name: "stalled" },
        );
        const fastSubscription = broker.subscribe(`${p}.load`, fast.handler, { name: "fast" });
        await Promise.all([slow.ready, fastSubscription.ready]);
        broker.publish(`${p}.load`, event(`${p}.load`, { n: 0 }));
        await waitFor(() => slowSeen.length === 1, "the stalled handler to start");
        for (let n = 1; n <= 10; n++) broker.publish(`${p}.load`, event(`${p}.load`, { n }));
        await waitFor(() => fast.events.length === 11, "the fast subscriber to get all 11 events");
        await waitFor(() => slow.queued + slow.dropped === 10, "the stalled subscriber to be offered all 10");
        assert.equal(slow.queueDepth, 4);
        assert.equal(slow.queued, 4);
        assert.equal(slow.dropped, 6);
        assert.equal(fastSubscription.dropped, 0);
        const stats = broker.stats();
        assert.equal(stats.dropped, 6);
        const stalledStats = stats.subscriptions.find((s) => s.name === "stalled");
        assert.deepEqual(
          {
            queued: stalledStats?.queued,
            dropped: stalledStats?.dropped,
            queueDepth: stalledStats?.queueDepth,
          },
          { queued: 4, dropped: 6, queueDepth: 4 },
        );
        gate.resolve();
        await waitFor(() => slowSeen.length === 5, "the stalled subscriber to catch up");
        assert.deepEqual(slowSeen, [0, 1, 2, 3, 4], "the queued events, in order; the dropped ones never");
        // With room again, it receives new events.
        broker.publish(`${p}.load`, event(`${p}.load`, { n: 11 }));
        await waitFor(() => slowSeen.length === 6, "a new event after catching up");
        assert.equal(slowSeen[5], 11);
        assert.equal(slow.delivered, 6);
      }));

    it("survives a handler that throws or rejects, and reports each failure", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const errors: BrokerError[] = [];
        broker.onError((error) => errors.push(error));
        const seen: number[] = [];
        const subscription = broker.subscribe(
          `${p}.boom`,
          async (e) => {
            const n = e.payload.n as number;
            if (n === 1) throw new Error("thrown");
            if (n === 2) await Promise.reject(new Error("rejected"));
            seen.push(n);
          },
          { name: "fragile" },
        );
        await subscription.ready;
        for (let n = 0; n < 5; n++) broker.publish(`${p}.boom`, event(`${p}.boom`, { n }));
        await waitFor(() => seen.length === 3, "the handler to go on past the failures");
        assert.deepEqual(seen, [0, 3, 4]);
        assert.equal(subscription.handlerErrors, 2);
        assert.equal(broker.stats().handlerErrors, 2);
        const failures = errors.filter((e) => e.code === "handler_failed");
        assert.equal(failures.length, 2);
        assert.deepEqual(
          failures.map((e) => [e.subscription, e.topic, (e.cause as Error).message]),
          [
            ["fragile", `${p}.boom`, "thrown"],
            ["fragile", `${p}.boom`, "rejected"],
          ],
        );
        assert.match(failures[0]?.message ?? "", /subscriber "fragile" failed on topic/);
      }));

    it("serves many subscribers, each getting every event in order", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const subscribers = 40;
        const events = 50;
        const seen: number[][] = Array.from({ length: subscribers }, () => []);
        const subscriptions: Subscription[] = [];
        for (let i = 0; i < subscribers; i++) {
          const pattern = i % 3 === 0 ? `${p}.many` : i % 3 === 1 ? `${p}.*` : `${p}.>`;
          subscriptions.push(broker.subscribe(pattern, (e) => void seen[i]?.push(e.payload.n as number)));
        }
        await Promise.all(subscriptions.map((s) => s.ready));
        for (let n = 0; n < events; n++) broker.publish(`${p}.many`, event(`${p}.many`, { n }));
        await waitFor(
          () => seen.every((list) => list.length === events),
          "every subscriber's events",
          10_000,
        );
        const expected = Array.from({ length: events }, (_, n) => n);
        for (const list of seen) assert.deepEqual(list, expected);
        const stats = broker.stats();
        assert.equal(stats.published, events);
        assert.equal(stats.delivered, subscribers * events);
        assert.equal(stats.subscriptions.length, subscribers);
      }));

    it("round-trips an event: payload, Unicode, nulls, extra fields, the event's own topic", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const got = recorder();
        const subscription = broker.subscribe(`${p}.>`, got.handler);
        await subscription.ready;
        const sent = {
          id: "01940000-0000-0000-0000-000000000002",
          timestamp: "2026-05-01T00:01:00.123456+02:00",
          // The event's topic need not be the one it is published on (plugin contract §5.1).
          topic: "plugin.inbound.slack.team_a",
          source: "slack",
          session_id: null,
          correlation_id: "corr-1",
          metadata: { trace: ["a", 1, true, null] },
          payload: {
            text: 'héllo wörld — 你好 👋🏽 \u2028 "quoted" \\ back',
            nested: { deep: { list: [1, 2.5, -3e-7, { x: "" }], empty: {} } },
            flag: false,
            nothing: null,
            big: Number.MAX_SAFE_INTEGER,
          },
        };
        broker.publish(`${p}.unicode.日本`, sent as BrokerEvent);
        await waitFor(() => got.events.length === 1, "the event");
        assert.deepEqual(got.events[0], sent);
        assert.deepEqual(got.topics, [`${p}.unicode.日本`]);
      }));

    it("normalises through JSON and hands out frozen copies the publisher cannot change", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const got = recorder();
        const subscription = broker.subscribe(`${p}.json`, got.handler);
        await subscription.ready;
        const payload: Record<string, unknown> = { keep: 1, gone: undefined, nan: Number.NaN, list: [1] };
        const sent = createEvent({ topic: `${p}.json`, source: "test", payload });
        broker.publish(`${p}.json`, sent);
        (payload.list as number[]).push(2);
        await waitFor(() => got.events.length === 1, "the event");
        const received = got.events[0] as BrokerEvent;
        assert.deepEqual(received.payload, { keep: 1, nan: null, list: [1] });
        assert.ok(Object.isFrozen(received) && Object.isFrozen(received.payload));
        assert.throws(() => {
          (received.payload.list as number[]).push(3);
        }, TypeError);
      }));

    it("createEvent mints a UUID v7 id and an RFC 3339 timestamp", () => {
      const made = createEvent({ topic: "a.b", source: "test", session_id: "s1", correlation_id: "c" });
      assert.ok(isUuid(made.id) && uuidVersion(made.id) === 7);
      assert.match(made.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.deepEqual(made.payload, {});
      assert.equal(made.session_id, "s1");
      assert.equal(made.correlation_id, "c");
      assert.equal(createEvent({ topic: "a", source: "s", id: "x", timestamp: "t" }).id, "x");
    });

    it("refuses bad topics, patterns, events and options with typed errors, delivering nothing", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const got = recorder();
        const subscription = broker.subscribe(`${p}.>`, got.handler);
        await subscription.ready;
        const good = event(`${p}.ok`);
        const cases: [() => unknown, BrokerError["code"]][] = [
          [() => broker.publish(`${p}.*`, good), "invalid_topic"],
          [() => broker.publish(`${p}..x`, good), "invalid_topic"],
          [() => broker.publish(`${p}.a b`, good), "invalid_topic"],
          [() => broker.publish(`${p}.x`, { ...good, source: "" }), "invalid_event"],
          [() => broker.publish(`${p}.x`, { ...good, id: "not-a-uuid" }), "invalid_event"],
          [() => broker.publish(`${p}.x`, { ...good, timestamp: "yesterday" }), "invalid_event"],
          [
            () =>
              broker.publish(`${p}.x`, { ...good, payload: [1, 2] as unknown as Record<string, unknown> }),
            "invalid_event",
          ],
          [() => broker.publish(`${p}.x`, { ...good, payload: { n: 10n } }), "invalid_event"],
          [() => broker.publish(`${p}.x`, null as unknown as BrokerEvent), "invalid_event"],
          [
            () => broker.publish(`${p}.x`, { ...good, payload: { blob: "x".repeat(1024 * 1024) } }),
            "too_large",
          ],
          [() => broker.subscribe(`${p}.>.x`, () => {}), "invalid_pattern"],
          [() => broker.subscribe(`${p}.a*`, () => {}), "invalid_pattern"],
          [() => broker.subscribe(`${p}.x`, () => {}, { queueDepth: 0 }), "invalid_option"],
          [() => broker.subscribe(`${p}.x`, () => {}, { queueDepth: 2.5 }), "invalid_option"],
          [() => broker.subscribe(`${p}.x`, () => {}, { name: "" }), "invalid_option"],
        ];
        for (const [attempt, code] of cases)
          assert.equal(brokerErrorOf(attempt).code, code, attempt.toString());
        const invalid = brokerErrorOf(() => broker.publish(`${p}.x`, { ...good, timestamp: "yesterday" }));
        assert.match(invalid.message, /timestamp: must be an RFC 3339 date-time/);
        broker.publish(`${p}.ok`, good);
        await waitFor(() => got.events.length === 1, "the valid event");
        await new Promise((resolve) => setTimeout(resolve, 30));
        assert.deepEqual(got.topics, [`${p}.ok`], "no refused event was delivered");
        assert.equal(broker.stats().published, 1);
        assert.equal(broker.stats().subscriptions.length, 1, "no refused subscription was registered");
      }));

    it("names subscriptions after their pattern unless told otherwise", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        const unnamed = broker.subscribe(`${p}.a`, () => {});
        const named = broker.subscribe(`${p}.b`, () => {}, { name: "plugin:slack", queueDepth: 64 });
        assert.equal(unnamed.name, `${p}.a`);
        assert.equal(named.name, "plugin:slack");
        assert.deepEqual(
          broker.stats().subscriptions.map((s) => [s.name, s.pattern, s.queueDepth]),
          [
            [`${p}.a`, `${p}.a`, 1024],
            ["plugin:slack", `${p}.b`, 64],
          ],
        );
      }));

    it("uses the broker's default queue depth", () =>
      withBroker(
        async (broker) => {
          assert.equal(broker.subscribe(`${uniquePrefix()}.x`, () => {}).queueDepth, 7);
        },
        { queueDepth: 7 },
      ));

    it("reports readiness, and on close refuses new work and says so", async () => {
      const broker = await fixture.create();
      const statuses: BrokerReadiness[] = [];
      broker.onStatus((status) => statuses.push(status));
      assert.deepEqual(
        { ready: broker.readiness().ready, state: broker.readiness().state },
        { ready: true, state: "connected" },
      );
      assert.equal(broker.stats().ready, true);
      await broker.close();
      await broker.close(); // idempotent
      assert.deepEqual(
        { ready: broker.readiness().ready, state: broker.readiness().state },
        { ready: false, state: "closed" },
      );
      assert.equal(statuses[0]?.ready, false);
      assert.equal(statuses[0]?.state, "closed");
      const p = uniquePrefix();
      assert.equal(brokerErrorOf(() => broker.publish(`${p}.x`, event(`${p}.x`))).code, "closed");
      assert.equal(brokerErrorOf(() => broker.subscribe(`${p}.x`, () => {})).code, "closed");
    });

    it("close lets queued events reach their handlers first", async () => {
      const broker = await fixture.create();
      const p = uniquePrefix();
      const seen: number[] = [];
      const subscription = broker.subscribe(`${p}.drain`, async (e) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        seen.push(e.payload.n as number);
      });
      await subscription.ready;
      for (let n = 0; n < 30; n++) broker.publish(`${p}.drain`, event(`${p}.drain`, { n }));
      await broker.close({ drainTimeoutMs: 5000 });
      assert.deepEqual(
        seen,
        Array.from({ length: 30 }, (_, n) => n),
      );
    });

    it("close gives up on a stuck handler after its drain timeout", async () => {
      const broker = await fixture.create();
      const p = uniquePrefix();
      const seen: number[] = [];
      const subscription = broker.subscribe(`${p}.stuck`, async (e) => {
        seen.push(e.payload.n as number);
        await new Promise(() => {});
      });
      await subscription.ready;
      broker.publish(`${p}.stuck`, event(`${p}.stuck`, { n: 1 }));
      broker.publish(`${p}.stuck`, event(`${p}.stuck`, { n: 2 }));
      await waitFor(() => seen.length === 1, "the stuck handler to start");
      const started = Date.now();
      await broker.close({ drainTimeoutMs: 100 });
      const took = Date.now() - started;
      assert.ok(took < 2000, `close took ${took} ms`);
      assert.deepEqual(seen, [1], "the queued event was discarded, not delivered");
    });

    it("a listener that throws does not break the broker", () =>
      withBroker(async (broker) => {
        const p = uniquePrefix();
        broker.onError(() => {
          throw new Error("listener bug");
        });
        const later: BrokerError[] = [];
        const unlisten = broker.onError((error) => later.push(error));
        const seen: number[] = [];
        const subscription = broker.subscribe(`${p}.x`, (e) => {
          if (e.payload.n === 0) throw new Error("handler bug");
          seen.push(e.payload.n as number);
        });
        await subscription.ready;
        broker.publish(`${p}.x`, event(`${p}.x`, { n: 0 }));
        broker.publish(`${p}.x`, event(`${p}.x`, { n: 1 }));
        await waitFor(() => seen.length === 1, "the next event");
        assert.equal(later.length, 1, "the second listener still heard");
        unlisten();
        broker.publish(`${p}.x`, event(`${p}.x`, { n: 0 }));
        broker.publish(`${p}.x`, event(`${p}.x`, { n: 2 }));
        await waitFor(() => seen.length === 2, "the event after");
        assert.equal(later.length, 1, "an unlistened listener hears nothing more");
      }));
  });
}
