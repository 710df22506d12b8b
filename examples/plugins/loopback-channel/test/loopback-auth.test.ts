import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { ChannelAuthenticationError, ChannelCode, ChannelConnectionError } from "@nexo/wire";
import { PluginProcess } from "../../test-helpers/plugin-process.js";
import { SseClient } from "./sse-client.js";

const TOKEN = "s3cret-token-for-the-loopback-tests";

describe("loopback channel beyond this machine: the shared token", () => {
  let plugin: PluginProcess | undefined;
  afterEach(async () => {
    await plugin?.dispose();
    plugin = undefined;
  });

  test("listening on a non-loopback address without LOOPBACK_TOKEN is refused with -33002", async () => {
    plugin = await PluginProcess.start("loopback-channel", { env: { LOOPBACK_HOST: "0.0.0.0" } });
    await plugin.initialize();
    await assert.rejects(plugin.peer.request("channel.start", { kind: "loopback" }), (error: unknown) => {
      assert.ok(error instanceof ChannelAuthenticationError, String(error));
      assert.equal(error.code, ChannelCode.authenticationFailed);
      assert.match(error.message, /LOOPBACK_TOKEN .* required to listen on 0\.0\.0\.0/);
      return true;
    });
  });

  test("with a token every route but /healthz needs it", async () => {
    plugin = await PluginProcess.start("loopback-channel", {
      env: { LOOPBACK_HOST: "0.0.0.0", LOOPBACK_TOKEN: TOKEN },
    });
    await plugin.initialize();
    const started = await plugin.peer.request<{ port: number; token_required: boolean }>("channel.start", {
      kind: "loopback",
    });
    assert.equal(started.token_required, true);
    const base = `http://127.0.0.1:${started.port}`;
    const body = JSON.stringify({ from: "erin", text: "let me in" });
    const post = (authorization?: string) =>
      fetch(`${base}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body,
      });

    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await post()).status, 401);
    assert.equal((await post(`Bearer ${TOKEN}x`)).status, 401);
    assert.equal((await post(TOKEN)).status, 401, "the Bearer scheme is required");
    assert.equal((await fetch(`${base}/messages?to=erin&timeout=0`)).status, 401);
    await assert.rejects(SseClient.open(`${base}/stream?to=erin`), /HTTP 401/);
    assert.equal(plugin.published.length, 0);

    assert.equal((await post(`Bearer ${TOKEN}`)).status, 202);
    assert.equal((await plugin.waitPublished(1))[0]!.event.payload.text, "let me in");
    const stream = await SseClient.open(`${base}/stream?to=erin`, { authorization: `Bearer ${TOKEN}` });
    await plugin.peer.request("channel.send_outbound", {
      kind: "loopback",
      msg: { kind: "text", to: "erin", body: "welcome" },
    });
    assert.equal(JSON.parse((await stream.message(0)).data).text, "welcome");
    stream.close();
  });

  test("a port already in use is -33001 naming the address", async () => {
    plugin = await PluginProcess.start("loopback-channel");
    await plugin.initialize();
    const first = await plugin.peer.request<{ port: number }>("channel.start", { kind: "loopback" });
    const second = await PluginProcess.start("loopback-channel", {
      env: { LOOPBACK_PORT: String(first.port) },
    });
    try {
      await second.initialize();
      await assert.rejects(second.peer.request("channel.start", { kind: "loopback" }), (error: unknown) => {
        assert.ok(error instanceof ChannelConnectionError, String(error));
        assert.match(
          error.message,
          new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}: .*EADDRINUSE`),
        );
        return true;
      });
    } finally {
      await second.dispose();
    }
  });
});
