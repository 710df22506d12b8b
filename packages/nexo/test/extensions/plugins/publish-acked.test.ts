/**
 * nexo's acknowledged publish (`broker.publish_acked`) at the bridge, with a real plugin process
 * (the kitchen fixture, which speaks raw JSON-RPC), the real in-process broker and real receipts:
 * the answer waits for the router's receipt and carries the broker event's id; each refusal is a
 * typed error with `data.reason`; a bridge without receipts does not serve it; the host advertises
 * it in `initialize` only when asked to. The router's own outcomes are tested in
 * test/daemon/routing/router.test.ts; the loopback plugin over a real daemon killed under load by
 * the chaos suite's sigkill-load (chaos/sigkill-load.ts).
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { LocalBroker } from "../../../src/broker/local.js";
import type { BrokerEvent } from "../../../src/broker/types.js";
import { type InboundOutcome, InboundReceipts } from "../../../src/channels/inbound-receipts.js";
import { BrokerBridge } from "../../../src/extensions/plugins/bridge.js";
import type { PluginHostOptions } from "../../../src/extensions/plugins/host-types.js";
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

const TOPIC = "plugin.inbound.kitchen_chat";

async function setup(
  options: { receipts?: InboundReceipts; receiptTimeoutMs?: number; host?: Partial<PluginHostOptions> } = {},
) {
  const broker = new LocalBroker({ logger: recordingLogger() as never });
  brokers.push(broker);
  const made = await makeHost("kitchen", options.host ?? {});
  const bridge = new BrokerBridge({
    host: made.host,
    broker,
    kinds: made.manifest.channelKinds,
    logger: recordingLogger(),
    ...(options.receipts ? { receipts: options.receipts } : {}),
    ...(options.receiptTimeoutMs ? { receiptTimeoutMs: options.receiptTimeoutMs } : {}),
  });
  bridges.push(bridge);
  bridge.start();
  await made.host.start();
  const publishAcked = (topic = TOPIC, payload: Record<string, unknown> = { text: "hi" }) =>
    invokePluginTool(made.host, "kitchen_publish", {
      acked: true,
      topic,
      event: { topic, source: "kitchen", payload },
    }) as Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }>;
  return { broker, bridge, host: made.host, publishAcked };
}

/** A stand-in router: settles each inbound event with what `decide` says, as the daemon's does. */
function settleWith(
  broker: LocalBroker,
  receipts: InboundReceipts,
  decide: (event: BrokerEvent) => InboundOutcome,
) {
  const seen: BrokerEvent[] = [];
  broker.subscribe("plugin.inbound.>", (event) => {
    seen.push(event);
    receipts.settle(event.id, decide(event));
  });
  receipts.attachRouter();
  return seen;
}

describe("acknowledged publish (broker.publish_acked)", () => {
  it("answers once the router reported: the broker event's id, durable, not a duplicate", async () => {
    const receipts = new InboundReceipts();
    const { broker, bridge, publishAcked } = await setup({ receipts });
    const seen = settleWith(broker, receipts, () => ({ status: "queued", durable: true }));
    const reply = await publishAcked();
    assert.equal(seen.length, 1);
    assert.deepEqual(reply.result, { event_id: seen[0]!.id, durable: true, duplicate: false });
    assert.equal(bridge.stats().published, 1);
    assert.equal(receipts.pending, 0);
  });

  it("says duplicate when the inbox already held the message, and durable false for memory only", async () => {
    const receipts = new InboundReceipts();
    const { broker, publishAcked } = await setup({ receipts });
    const outcomes: InboundOutcome[] = [{ status: "duplicate" }, { status: "queued", durable: false }];
    settleWith(broker, receipts, () => outcomes.shift()!);
    assert.deepEqual(
      { ...((await publishAcked()).result as object), event_id: "-" },
      {
        event_id: "-",
        durable: true,
        duplicate: true,
      },
    );
    assert.equal(((await publishAcked()).result as { durable: boolean }).durable, false);
  });

  it("refuses with typed errors: allowlist, inbox full, unbound, queue full, unreadable", async () => {
    const receipts = new InboundReceipts();
    const { broker, bridge, publishAcked } = await setup({ receipts });
    const outcomes: InboundOutcome[] = [
      {
        status: "refused",
        reason: "inbox_full",
        detail: "the inbox is full: 2 inbound messages are waiting",
      },
      { status: "refused", reason: "not_routed", detail: "no agent is bound to plugin.inbound.kitchen_chat" },
      { status: "refused", reason: "queue_full", detail: "this conversation already has 8 messages waiting" },
      { status: "refused", reason: "invalid_message", detail: "names no sender" },
    ];
    settleWith(broker, receipts, () => outcomes.shift()!);
    const outside = await publishAcked("plugin.inbound.other");
    assert.equal(outside.error?.code, -32013);
    assert.deepEqual(outside.error?.data, { reason: "topic_not_allowed" });
    assert.equal(bridge.stats().rejected, 1);
    const full = await publishAcked();
    assert.deepEqual(
      { code: full.error?.code, data: full.error?.data },
      { code: -32014, data: { reason: "inbox_full", retry_after_secs: 1 } },
    );
    assert.match(full.error?.message ?? "", /inbox is full/);
    assert.deepEqual((await publishAcked()).error?.code, -32015);
    const queue = await publishAcked();
    assert.deepEqual(
      { code: queue.error?.code, data: queue.error?.data },
      { code: -32012, data: { reason: "queue_full", retry_after_secs: 1 } },
    );
    const unreadable = await publishAcked();
    assert.deepEqual(
      { code: unreadable.error?.code, data: unreadable.error?.data },
      { code: -32602, data: { reason: "invalid_message" } },
    );
  });

  it("is not acknowledged when no router runs, or the router stays silent past the timeout", async () => {
    const receipts = new InboundReceipts();
    const { broker, publishAcked } = await setup({ receipts, receiptTimeoutMs: 200 });
    const first = await publishAcked();
    assert.equal(first.error?.code, -32016);
    assert.deepEqual(first.error?.data, { reason: "not_acknowledged", retry_after_secs: 1 });
    assert.match(first.error?.message ?? "", /not routing/);
    // A router that takes the event but never reports (e.g. its queue dropped it).
    broker.subscribe("plugin.inbound.>", () => {});
    const detach = receipts.attachRouter();
    const silent = await publishAcked();
    assert.equal(silent.error?.code, -32016);
    assert.match(silent.error?.message ?? "", /did not report within 200 ms/);
    assert.equal(receipts.pending, 0, "a timed-out wait is forgotten");
    detach();
  });

  it("is -32601 on a bridge without receipts; the plain notification still publishes", async () => {
    const { broker, host, publishAcked } = await setup();
    assert.equal((await publishAcked()).error?.code, -32601);
    const seen: BrokerEvent[] = [];
    broker.subscribe("plugin.inbound.>", (event) => void seen.push(event));
    await invokePluginTool(host, "kitchen_publish", {
      topic: TOPIC,
      event: { topic: TOPIC, source: "kitchen", payload: { text: "plain" } },
    });
    await waitUntil(() => seen.length === 1, 5_000, "the notification's event");
    assert.equal(seen[0]?.payload.text, "plain");
  });

  it("is advertised in initialize params only when the host is told to (the manager does for bridged plugins)", async () => {
    const stats = async (host: Awaited<ReturnType<typeof setup>>["host"]) =>
      ((await invokePluginTool(host, "kitchen_stats", {})) as { hostFeatures: unknown }).hostFeatures;
    const plain = await setup();
    assert.equal(await stats(plain.host), null, "no host_features key for a host without the feature");
    const offered = await setup({ host: { hostFeatures: ["broker.publish_acked"] } });
    assert.deepEqual(await stats(offered.host), ["broker.publish_acked"]);
  });
});
