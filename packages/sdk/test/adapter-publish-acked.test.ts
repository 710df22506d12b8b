/**
 * `BrokerSender.publishAndWait` against a real SDK plugin process and a scripted host: with a host
 * that advertises `host_features: ["broker.publish_acked"]` it sends the request and resolves with
 * the host's acknowledgement, or rejects with PublishRefusedError carrying the host's reason; with a
 * host that does not (an upstream host), it falls back to the `broker.publish` notification.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { RpcError } from "@nexo/wire";
import { ScriptedHost } from "./helpers/scripted-host.js";

const hosts: ScriptedHost[] = [];
after(async () => {
  for (const host of hosts) host.assertFramesIntact();
  await Promise.all(hosts.map((host) => host.dispose()));
});

async function started(hostFeatures?: unknown): Promise<ScriptedHost> {
  // Generous: a plugin compiled on the fly takes seconds to answer on a loaded machine.
  const host = new ScriptedHost("demo-plugin.ts", { requestTimeoutMs: 90_000 });
  hosts.push(host);
  await host.peer.request("initialize", {
    nexo_version: "0.1.5",
    ...(hostFeatures === undefined ? {} : { host_features: hostFeatures }),
  });
  return host;
}

const publishAndWait = (host: ScriptedHost) =>
  host.peer.request("tool.invoke", { tool_name: "demo_info", args: { acked: true } }) as Promise<{
    offered: boolean;
    receipt?: unknown;
    refused?: { name: string; code: number; reason: string; retryAfterSecs?: number; message: string };
  }>;

describe("publishAndWait (nexo's acknowledged publish)", () => {
  test("a host that offers it gets the request and its answer comes back as the receipt", async () => {
    const host = await started(["broker.publish_acked", "something.newer"]);
    const requests: unknown[] = [];
    const replies: Array<() => unknown> = [
      () => ({ event_id: "01940000-0000-7000-8000-000000000007", durable: true, duplicate: false }),
      () => {
        throw new RpcError(-32014, "the inbox is full: 2 inbound messages are waiting", {
          reason: "inbox_full",
          retry_after_secs: 1,
        });
      },
      () => {
        throw new RpcError(-32015, "not routed: no agent is bound", { reason: "not_routed" });
      },
    ];
    host.peer.onRequest("broker.publish_acked", (params) => {
      requests.push(params);
      return replies.shift()!();
    });
    const first = await publishAndWait(host);
    assert.deepEqual(first, {
      offered: true,
      receipt: {
        acknowledged: true,
        eventId: "01940000-0000-7000-8000-000000000007",
        durable: true,
        duplicate: false,
      },
    });
    assert.deepEqual(requests[0], {
      topic: "plugin.inbound.loopback",
      event: { topic: "plugin.inbound.loopback", source: "demo", payload: { via: "publishAndWait" } },
    });
    assert.equal(host.published.length, 0, "no notification was sent besides the request");
    const full = await publishAndWait(host);
    assert.deepEqual(full.refused, {
      name: "PublishRefusedError",
      code: -32014,
      reason: "inbox_full",
      retryAfterSecs: 1,
      message: "rpc error -32014: the inbox is full: 2 inbound messages are waiting",
    });
    const unbound = await publishAndWait(host);
    assert.equal(unbound.refused?.reason, "not_routed");
    assert.equal(unbound.refused?.retryAfterSecs, undefined);
  });

  test("a host that does not offer it (no host_features, or not this one) gets the notification", async () => {
    const started3 = await Promise.all([undefined, ["something.else"], "broker.publish_acked"].map(started));
    for (const host of started3) {
      let asked = 0;
      host.peer.onRequest("broker.publish_acked", () => {
        asked++;
        return { event_id: "x", durable: true, duplicate: false };
      });
      const reply = await publishAndWait(host);
      assert.deepEqual(reply, { offered: false, receipt: { acknowledged: false } });
      const [published] = await host.waitPublished(1);
      assert.deepEqual(published?.event.payload, { via: "publishAndWait" });
      assert.equal(asked, 0);
    }
  });
});
