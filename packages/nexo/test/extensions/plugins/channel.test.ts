/**
 * The channel wrapper against a real plugin process: an adapter per extends.channels kind in the
 * ChannelRegistry, -33001..-33005 as the typed channel errors, -32601 as an unsupported feature,
 * and NEXO_PLUGIN_CHANNEL_TIMEOUT_MS.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import {
  ChannelAuthenticationError,
  ChannelConnectionError,
  ChannelRateLimitedError,
  ChannelRecipientError,
  ChannelUnsupportedError,
  TimeoutError,
} from "@nexo/wire";
import { ChannelRegistry } from "../../../src/channels/registry.js";
import { PluginChannelAdapter, registerPluginChannels } from "../../../src/extensions/plugins/channel.js";
import { PluginProtocolError } from "../../../src/extensions/plugins/errors.js";
import { cleanupHosts, startHost as started } from "../../fixtures/plugins/harness.js";

afterEach(cleanupHosts);

describe("channel wrapper", () => {
  it("registers an adapter per extends.channels kind and forwards start, stop and send", async () => {
    const { host } = await started();
    const registry = new ChannelRegistry();
    const remove = registerPluginChannels(host, registry);
    assert.deepEqual(registry.kinds(), ["kitchen_chat"]);
    const adapter = registry.require("kitchen_chat");
    assert.equal(adapter.owner, "plugin:kitchen");
    await adapter.start({ instance: "primary" });
    await adapter.start();
    assert.deepEqual(await adapter.sendOutbound({ kind: "text", to: "U1", body: "hi" }), {
      messageId: "m-hi",
      sentAtUnix: 1741032000,
    });
    await adapter.stop();
    remove();
    assert.deepEqual(registry.kinds(), []);
  });

  it("maps -33001..-33005 to the typed channel errors, keeping their data", async () => {
    const { host } = await started();
    const adapter = new PluginChannelAdapter(host, "kitchen_chat");
    await assert.rejects(adapter.start({ instance: "broken" }), ChannelConnectionError);
    const send = (to: string) => adapter.sendOutbound({ kind: "text", to, body: "x" });
    await assert.rejects(send("error:-33002"), ChannelAuthenticationError);
    await assert.rejects(send("error:-33003"), (error: unknown) => {
      assert.ok(error instanceof ChannelRecipientError);
      assert.equal(error.recipient, "ghost");
      assert.equal(error.reason, "no such user");
      return true;
    });
    await assert.rejects(send("error:-33004"), (error: unknown) => {
      assert.ok(error instanceof ChannelRateLimitedError);
      assert.equal(error.retryAfterSecs, 42);
      return true;
    });
    await assert.rejects(send("error:-33005"), (error: unknown) => {
      assert.ok(error instanceof ChannelUnsupportedError);
      assert.equal(error.feature, "reactions");
      return true;
    });
    await assert.rejects(send("garbage"), PluginProtocolError);
  });

  it("turns -32601 into an unsupported feature named after the method", async () => {
    const { host } = await started({}, { FIXTURE_UNIMPLEMENTED: "channel.stop" });
    const adapter = new PluginChannelAdapter(host, "kitchen_chat");
    await adapter.start();
    await assert.rejects(adapter.stop(), (error: unknown) => {
      assert.ok(error instanceof ChannelUnsupportedError);
      assert.equal(error.feature, "channel.stop");
      return true;
    });
  });

  it("times out after NEXO_PLUGIN_CHANNEL_TIMEOUT_MS", async () => {
    const { host } = await started({ NEXO_PLUGIN_CHANNEL_TIMEOUT_MS: "300" });
    assert.equal(host.timeouts.channel.sendOutboundMs, 300);
    const adapter = new PluginChannelAdapter(host, "kitchen_chat");
    await assert.rejects(adapter.sendOutbound({ kind: "text", to: "slow", body: "x" }), TimeoutError);
  });
});
