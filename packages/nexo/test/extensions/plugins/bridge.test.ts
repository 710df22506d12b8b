/**
 * The broker bridge with real plugin processes and the real in-process broker: outbound delivery
 * on `plugin.outbound.K` and `.K.>`, inbound publishes with the fields the host fills in, the
 * allowlist as the one choke point, and backpressure: a plugin that stops reading loses events
 * (counted, bounded) while the broker and another plugin carry on.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createEvent } from "../../../src/broker/event.js";
import { LocalBroker } from "../../../src/broker/local.js";
import type { BrokerEvent } from "../../../src/broker/types.js";
import {
  BROKER_EVENT_QUEUE_DEPTH,
  BrokerBridge,
  inboundPatterns,
  outboundPatterns,
} from "../../../src/extensions/plugins/bridge.js";
import type { PluginHost } from "../../../src/extensions/plugins/host.js";
import { invokePluginTool } from "../../../src/extensions/plugins/tool.js";
import { cleanupHosts, makeHost } from "../../fixtures/plugins/harness.js";
import { recordingLogger, waitUntil } from "../../fixtures/processes.js";

const brokers: LocalBroker[] = [];
const bridges: BrokerBridge[] = [];
afterEach(async () => {
  for (const bridge of bridges.splice(0)) bridge.stop();
  await cleanupHosts();
  await Promise.all(brokers.splice(0).map((broker) => broker.close({ drainTimeoutMs: 100 })));
});

const silentLogger = recordingLogger();

function newBroker(): LocalBroker {
  const broker = new LocalBroker({ logger: silentLogger as never });
  brokers.push(broker);
  return broker;
}

async function startBridged(broker: LocalBroker) {
  const made = await makeHost("kitchen");
  const logger = recordingLogger();
  const bridge = new BrokerBridge({ host: made.host, broker, kinds: made.manifest.channelKinds, logger });
  bridges.push(bridge);
  bridge.start();
  await made.host.start();
  return { ...made, bridge, bridgeLogs: logger.entries };
}

interface KitchenStats {
  eventCount: number;
  recentEvents: Array<{ topic: string; text: string | null; id: string }>;
}
const stats = (host: PluginHost) => invokePluginTool(host, "kitchen_stats", {}) as Promise<KitchenStats>;

function capture(broker: LocalBroker, pattern: string): BrokerEvent[] {
  const seen: BrokerEvent[] = [];
  broker.subscribe(pattern, (event) => {
    seen.push(event);
  });
  return seen;
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("broker bridge", () => {
  it("derives the subscription and allowlist patterns of §6", () => {
    assert.deepEqual(outboundPatterns(["slack"]), ["plugin.outbound.slack", "plugin.outbound.slack.>"]);
    assert.deepEqual(inboundPatterns(["a", "b"]), [
      "plugin.inbound.a",
      "plugin.inbound.a.>",
      "plugin.inbound.b",
      "plugin.inbound.b.>",
    ]);
  });

  it("delivers outbound events for the kind and its instances, and nothing else", async () => {
    const broker = newBroker();
    const { host, bridge } = await startBridged(broker);
    const publish = (topic: string, text: string) =>
      broker.publish(topic, createEvent({ topic, source: "agent.ana", payload: { text } }));
    publish("plugin.outbound.kitchen_chat", "one");
    publish("plugin.outbound.kitchen_chat.team_a.thread_1", "two");
    publish("plugin.outbound.other", "not mine");
    publish("plugin.inbound.kitchen_chat", "not outbound");
    await waitUntil(() => bridge.stats().delivered === 2, 2_000, "two deliveries");
    const seen = await stats(host);
    assert.equal(seen.eventCount, 2);
    assert.deepEqual(
      seen.recentEvents.map((e) => [e.topic, e.text]),
      [
        ["plugin.outbound.kitchen_chat", "one"],
        ["plugin.outbound.kitchen_chat.team_a.thread_1", "two"],
      ],
    );
    assert.match(seen.recentEvents[0]?.id ?? "", UUID_V7);
  });

  it("publishes the child's inbound events, filling id, timestamp and session_id", async () => {
    const broker = newBroker();
    const inbound = capture(broker, "plugin.inbound.>");
    const { bridge } = await startBridged(broker);
    broker.publish(
      "plugin.outbound.kitchen_chat",
      createEvent({
        topic: "plugin.outbound.kitchen_chat",
        source: "agent.ana",
        payload: { text: "ping", echo: true },
      }),
    );
    await waitUntil(() => inbound.length === 1, 2_000, "the echoed event");
    const event = inbound[0]!;
    assert.equal(event.topic, "plugin.inbound.kitchen_chat");
    assert.equal(event.source, "kitchen");
    assert.deepEqual(event.payload, { echo: "ping" });
    assert.match(event.id, UUID_V7);
    assert.ok(Math.abs(Date.parse(event.timestamp) - Date.now()) < 10_000);
    assert.equal(event.session_id, null);
    assert.equal(bridge.stats().published, 1);
  });

  it("drops publishes outside the allowlist with a warning, whatever the event claims", async () => {
    const broker = newBroker();
    const everything = capture(broker, ">");
    const { host, bridge, bridgeLogs } = await startBridged(broker);
    const publish = (topic: string, eventTopic: string, extra: Record<string, unknown> = {}) =>
      invokePluginTool(host, "kitchen_publish", {
        topic,
        event: { topic: eventTopic, source: "kitchen", payload: { hi: 1 }, ...extra },
      });
    await publish("agent.route.ana", "agent.route.ana");
    await publish("plugin.inbound.kitchen_chat", "command.shutdown");
    await publish("plugin.inbound.other", "plugin.inbound.other");
    await publish("plugin.inbound.kitchen_chatty", "plugin.inbound.kitchen_chatty");
    const keptId = "01940000-0000-7000-8000-000000000002";
    await publish("plugin.inbound.kitchen_chat.team_a", "plugin.inbound.kitchen_chat.team_a", {
      id: keptId,
      session_id: "s-1",
    });
    await waitUntil(() => everything.length === 1, 2_000, "the one allowed publish");
    assert.equal(everything[0]?.topic, "plugin.inbound.kitchen_chat.team_a");
    assert.equal(everything[0]?.id, keptId, "an id the child set is kept");
    assert.equal(everything[0]?.session_id, "s-1");
    await sleep(50);
    assert.equal(everything.length, 1);
    assert.deepEqual(
      { rejected: bridge.stats().rejected, published: bridge.stats().published },
      { rejected: 4, published: 1 },
    );
    assert.equal(bridgeLogs.filter((e) => e.message?.includes("outside the plugin's allowlist")).length, 4);
  });

  it("forwards nothing in either direction once stopped", async () => {
    const broker = newBroker();
    const inbound = capture(broker, "plugin.inbound.>");
    const { host, bridge } = await startBridged(broker);
    bridge.stop();
    broker.publish(
      "plugin.outbound.kitchen_chat",
      createEvent({ topic: "plugin.outbound.kitchen_chat", source: "agent.ana", payload: { text: "late" } }),
    );
    await invokePluginTool(host, "kitchen_publish", {
      topic: "plugin.inbound.kitchen_chat",
      event: { topic: "plugin.inbound.kitchen_chat", source: "kitchen", payload: {} },
    });
    await sleep(50);
    assert.equal((await stats(host)).eventCount, 0);
    assert.equal(inbound.length, 0);
  });

  it("drops (and counts) events for a plugin that stops reading, without slowing anyone else", async () => {
    const broker = newBroker();
    const stalled = await startBridged(broker);
    const healthy = await startBridged(broker);
    await invokePluginTool(stalled.host, "kitchen_stall", {});
    await sleep(50);

    const total = 3_000;
    const payload = { text: "x".repeat(200) };
    for (let sent = 0; sent < total; ) {
      for (let i = 0; i < 50; i++, sent++) {
        broker.publish(
          "plugin.outbound.kitchen_chat",
          createEvent({ topic: "plugin.outbound.kitchen_chat", source: "load", payload }),
        );
      }
      // Paced by the healthy plugin, so only the stalled one can fall behind.
      const target = sent;
      await waitUntil(
        () => healthy.bridge.stats().delivered >= target,
        5_000,
        "the healthy plugin to keep up",
      );
    }
    const healthySeen = await stats(healthy.host);
    assert.equal(healthySeen.eventCount, total);
    assert.equal(healthy.bridge.stats().dropped, 0);

    const stalledStats = stalled.bridge.stats();
    assert.ok(stalledStats.dropped > total / 2, `dropped ${stalledStats.dropped}`);
    assert.ok(stalledStats.queued <= BROKER_EVENT_QUEUE_DEPTH);
    assert.ok(stalledStats.delivered + stalledStats.dropped + stalledStats.queued <= total);
    assert.equal(broker.stats().dropped, 0, "the broker itself never had to drop");
    assert.ok(stalled.bridgeLogs.some((e) => e.message?.includes("queue full")));
  });
});
