/**
 * `ext/channel/send` with real parts in one process: a daemon started from a real config
 * directory, its AppServer door on a real WebSocket, and a raw WebSocket client that declares
 * `channelAdapter`. What the daemon sends to the adapter's channel kind (`services.channels.send`,
 * the path of an agent's routed reply and of `nexo/dispatch`) reaches the adapter as
 * `ext/channel/send`; its `remoteMessageId` is the receipt, `delivered: false` is a channel error
 * with the adapter's code, and once the adapter is gone the kind is unavailable again.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ChannelConnectionError } from "@nexo/wire";
import { ChannelUnavailableError } from "../../../src/daemon/services/index.js";
import { appServerDoor } from "../../../src/doors/appserver/daemon-door.js";
import { createLogger } from "../../../src/log.js";
import { WsClient } from "../../helpers/appserver-client.js";
import { type DaemonDir, startFromDir } from "../../helpers/daemon-dir.js";

let env: DaemonDir;
let door: ReturnType<typeof appServerDoor>;
before(async () => {
  env = await startFromDir({
    "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: s }\n",
    // The adapter's channel must be one the server accepts.
    "appserver.yaml": "external_channels:\n  telegram: { transport: websocket }\n",
  });
  door = appServerDoor(
    env.daemon,
    { websocket: { host: "127.0.0.1", port: 0 }, agent: "ana", approvalTimeoutMs: 30_000 },
    createLogger({ level: "silent" }),
  );
  await door.start();
});
after(async () => {
  await door.stop("test over");
  await env.daemon.stop("test over");
});

describe("ext/channel/send", () => {
  test("the daemon's sends to an adapter's channel go out as ext/channel/send", async () => {
    const adapter = new WsClient(door.value.listener.url);
    await adapter.opened;
    const sent: Array<Record<string, unknown>> = [];
    adapter.onServerRequest = (method, params) => {
      if (method !== "ext/channel/send") return {};
      sent.push(params);
      const message = params.message as { text?: string };
      return message.text === "refuse me"
        ? { delivered: false, errorCode: "AdapterDeliveryFailed", errorMessage: "chat is gone" }
        : { delivered: true, remoteMessageId: `tg-${sent.length}` };
    };
    await adapter.initialize(
      { channelAdapter: { channelName: "telegram", deliveryCapabilities: { structuredDelivery: true } } },
      "telegram-adapter",
    );
    // The adapter is registered once the handshake is done.
    const deadline = Date.now() + 15_000;
    while (!env.daemon.channels.has("telegram") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const channels = env.daemon.services.channels;
    const receipt = await channels.send("telegram", { kind: "text", to: "chat-42", body: "hello there" });
    assert.equal(receipt.messageId, "tg-1");
    assert.deepEqual(sent[0], { target: "chat-42", message: { kind: "text", text: "hello there" } });

    await assert.rejects(
      channels.send("telegram", { kind: "text", to: "chat-42", body: "refuse me" }),
      (e) => {
        assert.ok(e instanceof ChannelConnectionError, String(e));
        assert.match(e.message, /AdapterDeliveryFailed.*chat is gone/);
        return true;
      },
    );

    adapter.close();
    await adapter.closed;
    const gone = Date.now() + 15_000;
    while (env.daemon.channels.has("telegram") && Date.now() < gone) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await assert.rejects(
      channels.send("telegram", { kind: "text", to: "chat-42", body: "anyone?" }),
      ChannelUnavailableError,
    );
  });
});
