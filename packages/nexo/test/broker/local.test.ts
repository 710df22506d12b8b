import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBroker } from "../../src/broker/config.js";
import { LocalBroker } from "../../src/broker/local.js";
import { event, waitFor } from "./helpers.js";
import { brokerSuite } from "./suite.js";

brokerSuite("LocalBroker", {
  create: async (options) => new LocalBroker({ queueDepth: options?.queueDepth }),
});

describe("LocalBroker specifics", () => {
  it("never runs a handler inside publish", async () => {
    const broker = new LocalBroker();
    const seen: string[] = [];
    broker.subscribe("a.b", () => void seen.push("handler"));
    broker.publish("a.b", event("a.b"));
    seen.push("after publish");
    await waitFor(() => seen.length === 2, "the handler");
    assert.deepEqual(seen, ["after publish", "handler"]);
    await broker.close();
  });

  it("shares one frozen copy of an event among its subscribers", async () => {
    const broker = new LocalBroker();
    const received: unknown[] = [];
    broker.subscribe("a.b", (e) => void received.push(e));
    broker.subscribe("a.*", (e) => void received.push(e));
    const sent = event("a.b", { n: 1 });
    broker.publish("a.b", sent);
    await waitFor(() => received.length === 2, "both deliveries");
    assert.equal(received[0], received[1]);
    assert.notEqual(received[0], sent);
    await broker.close();
  });

  it("is what createBroker builds for {type: local}", async () => {
    const broker = await createBroker({ type: "local", queue_depth: 16 });
    assert.ok(broker instanceof LocalBroker);
    assert.equal(broker.kind, "local");
    assert.equal(broker.subscribe("x", () => {}).queueDepth, 16);
    assert.deepEqual(broker.readiness(), { ready: true, state: "connected", detail: "in-process" });
    await broker.close();
  });
});
