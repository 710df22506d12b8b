/**
 * `externalChannel/*` and the channel adapter gate through the real `nexo app-server --config DIR
 * --listen ws://…` (one server for the file), driven as DotCraft Desktop does:
 * - the channels are appserver.yaml's `external_channels`, edited with the file's comments kept;
 *   every error code of the family (-32080, -32081, -32082) with the file untouched;
 * - an adapter whose channel is not listed gets `system/event {kind: "channelRejected"}` and is
 *   closed; once Desktop upserts `{name, enabled: true, transport: "websocket"}` the same adapter is
 *   accepted; disabling the channel rejects and closes the connected adapter;
 * - a `subprocess` channel's adapter is started by the server (its `${VAR}` env expanded), talks
 *   over its stdio, is listed as external, and is stopped when the channel is removed; a WebSocket
 *   adapter cannot take a subprocess channel's name;
 * - a server without a config directory accepts no adapter.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { AppServerProcess, type Message, WsClient } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, LLM_YAML } from "./management-helpers.js";

const EXAMPLES = fileURLToPath(new URL("../../../../../../examples/plugins/", import.meta.url));
const APPSERVER_YAML = `# the AppServer of this workspace
approval_timeout_s: 60 # keep
external_channels:
  # the telegram bridge runs on another host
  telegram: { transport: websocket }
`;

/** A channel adapter speaking over its stdio, as a subprocess channel's adapter does. */
const ADAPTER_JS = `
import { createInterface } from "node:readline";
import { writeFileSync } from "node:fs";
writeFileSync(process.env.PID_FILE, String(process.pid));
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
send({ id: 1, method: "initialize", params: {
  clientInfo: { name: "sub-adapter", version: "1" },
  capabilities: { channelAdapter: { channelName: process.argv[2] } } } });
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === 1 && m.result) send({ method: "initialized", params: {} });
  else if (m.method !== undefined && m.id !== undefined) send({ id: m.id, result: {} });
});
process.stdin.on("end", () => process.exit(0));
`;

const config = configDir({
  "agents.yaml": AGENTS_YAML,
  "llm.yaml": LLM_YAML,
  "appserver.yaml": APPSERVER_YAML,
  "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLES, "loopback-channel")}\n`,
  "adapter.mjs": ADAPTER_JS,
});
const pidFile = join(config.dir, "adapter.pid");
let server: AppServerProcess;
let url: string;
const sockets: WsClient[] = [];

async function connect(capabilities: Record<string, unknown> = {}, name = "test-client"): Promise<WsClient> {
  const client = new WsClient(url);
  sockets.push(client);
  await client.opened;
  client.onServerRequest = (method) => (method === "ext/channel/heartbeat" ? {} : undefined);
  await client.initialize(capabilities, name);
  return client;
}

const adapterFor = (channelName: string) => ({ channelAdapter: { channelName } });
type Channel = { name: string; category: string };

/** channel/list until `ok` holds (adapters are adopted once their own `initialized` arrives). */
async function channelsUntil(client: WsClient, ok: (names: string[]) => boolean): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { channels } = await client.request<{ channels: Channel[] }>("channel/list", {});
    const names = channels.filter((c) => c.category === "external").map((c) => c.name);
    if (ok(names) || Date.now() > deadline) return names;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function rejectedEvent(client: WsClient): Message | undefined {
  return client.received.find((m) => m.method === "system/event" && m.params?.kind === "channelRejected");
}

before(async () => {
  server = new AppServerProcess({
    args: ["--config", config.dir, "--listen", "ws://127.0.0.1:0", "--provider", "scripted"],
    stdin: "ignore",
    env: { ADAPTER_PID_FILE: pidFile, ANTHROPIC_API_KEY: "sk-test" },
  });
  url = await server.websocketUrl();
});
after(async () => {
  for (const socket of sockets) socket.close();
  await server.stop();
});

describe("AppServer externalChannel/*", () => {
  test("list, get, upsert and remove over appserver.yaml; the family's errors", async () => {
    const desk = await connect({ configChange: true });
    assert.equal((await desk.call("initialize", {})).error?.code, -32003);
    const listed = await desk.request<{ channels: unknown[] }>("externalChannel/list", {});
    assert.deepEqual(listed.channels, [{ name: "telegram", enabled: true, transport: "websocket" }]);
    assert.deepEqual(await desk.request("externalChannel/get", { name: "TELEGRAM" }), {
      channel: { name: "telegram", enabled: true, transport: "websocket" },
    });

    // Desktop's module start: the fields of the other transport come as nulls.
    const saved = await desk.request<{ channel: unknown }>("externalChannel/upsert", {
      channel: { name: "qq", enabled: true, transport: "websocket", command: null, args: null, env: null },
    });
    assert.deepEqual(saved.channel, { name: "qq", enabled: true, transport: "websocket" });
    const text = config.read("appserver.yaml");
    assert.match(text, /# the AppServer of this workspace/);
    assert.match(text, /approval_timeout_s: 60 # keep/);
    assert.match(text, /# the telegram bridge runs on another host/);
    assert.match(text, /qq:\s*\n\s+transport: websocket/);
    const changed = await desk.waitFor(
      (m) => m.method === "workspace/configChanged" && m.params?.source === "externalChannel/upsert",
    );
    assert.deepEqual(changed.params?.regions, ["externalChannel"]);

    const before = config.read("appserver.yaml");
    for (const [channel, code, detail] of [
      [{ name: "bad name!", transport: "websocket" }, -32081, /not a channel name/],
      [{ name: "feishu", transport: "carrier-pigeon" }, -32081, /transport/],
      [{ name: "feishu", transport: "subprocess" }, -32081, /needs a command/],
      [{ name: "Loopback", transport: "websocket" }, -32082, /loopback-channel/],
    ] as const) {
      const reply = await desk.call("externalChannel/upsert", { channel });
      assert.equal(reply.error?.code, code, JSON.stringify(channel));
      assert.match(reply.error?.data?.detail ?? "", detail);
    }
    assert.equal(config.read("appserver.yaml"), before);
    assert.equal((await desk.call("externalChannel/get", { name: "ghost" })).error?.code, -32080);
    assert.equal((await desk.call("externalChannel/remove", { name: "ghost" })).error?.code, -32080);

    assert.deepEqual(await desk.request("externalChannel/remove", { name: "qq" }), { removed: true });
    assert.doesNotMatch(config.read("appserver.yaml"), /qq/);
  });

  test("an adapter of a channel not listed is rejected; upserted, it is accepted; disabled, closed", async () => {
    const desk = await connect();
    const stranger = await connect(adapterFor("wechat"), "wechat-adapter");
    const closed = await stranger.closed;
    assert.match(closed.reason, /not registered/);
    const event = rejectedEvent(stranger);
    assert.equal(event?.params?.channelName, "wechat");
    assert.match(String(event?.params?.message), /wechat.*not registered/);

    // What Desktop does before it starts a channel module.
    await desk.request("externalChannel/upsert", {
      channel: { name: "wechat", enabled: true, transport: "websocket" },
    });
    const adapter = await connect(adapterFor("wechat"), "wechat-adapter");
    assert.deepEqual(await channelsUntil(desk, (names) => names.includes("wechat")), ["wechat"]);
    assert.equal(rejectedEvent(adapter), undefined);

    // Disabling the channel refuses the adapter that is connected now.
    await desk.request("externalChannel/upsert", {
      channel: { name: "wechat", enabled: false, transport: "websocket" },
    });
    assert.match((await adapter.closed).reason, /disabled/);
    assert.equal(rejectedEvent(adapter)?.params?.channelName, "wechat");
    assert.deepEqual(await channelsUntil(desk, (names) => !names.includes("wechat")), []);
  });

  test("a subprocess channel's adapter is started by the server, and stopped when removed", async () => {
    const desk = await connect();
    await desk.request("externalChannel/upsert", {
      channel: {
        name: "sub",
        enabled: true,
        transport: "subprocess",
        command: process.execPath,
        args: ["adapter.mjs", "sub"],
        workingDirectory: config.dir,
        env: { PID_FILE: "${ADAPTER_PID_FILE}" },
      },
    });
    assert.match(config.read("appserver.yaml"), /PID_FILE: \$\{ADAPTER_PID_FILE\}/);
    assert.deepEqual(await channelsUntil(desk, (names) => names.includes("sub")), ["sub"]);
    const pid = Number(readFileSync(pidFile, "utf8"));
    assert.ok(pid > 0 && isAlive(pid));

    // Its name is not for WebSocket adapters.
    const impostor = await connect(adapterFor("sub"), "impostor");
    assert.match((await impostor.closed).reason, /subprocess-only/);

    await desk.request("externalChannel/remove", { name: "sub" });
    assert.equal(isAlive(pid), false, "the adapter process was stopped");
    assert.deepEqual(await channelsUntil(desk, (names) => !names.includes("sub")), []);
    writeFileSync(pidFile, "");
  });

  test("ext/channel/toolCall: an adapter's tools are offered to its channel's threads and run on it", async () => {
    const desk = await connect();
    await desk.request("externalChannel/upsert", { channel: { name: "tg", transport: "websocket" } });
    const document = {
      name: "TgSendDocument",
      description: "Send a document to the current chat.",
      requiresChatContext: true,
      inputSchema: { type: "object", properties: { filePath: { type: "string" } }, required: ["filePath"] },
    };
    const adapter = await connect(
      { channelAdapter: { channelName: "tg", channelTools: [document] } },
      "tg-adapter",
    );
    const calls: Array<Record<string, unknown>> = [];
    adapter.onServerRequest = (method, params) => {
      if (method === "ext/channel/heartbeat") return {};
      if (method !== "ext/channel/toolCall") return undefined;
      calls.push(params);
      const args = params.arguments as { filePath: string };
      return args.filePath === "missing.pdf"
        ? { success: false, errorCode: "FileNotFound", errorMessage: "no such file" }
        : { success: true, contentItems: [{ type: "text", text: `sent ${args.filePath} to the chat` }] };
    };
    await channelsUntil(desk, (names) => names.includes("tg"));

    // The adapter runs its chat's thread, as DotCraft's ChannelAdapter does (no workspacePath: the
    // SDK leaves it out when it has none).
    const { thread } = await adapter.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "tg", userId: "u1", channelContext: "chat-9" },
      historyMode: "server",
    });
    const turn = async (client: WsClient, threadId: string, text: string) => {
      const { turn } = await client.request<{ turn: { id: string } }>("turn/start", {
        threadId,
        input: [{ type: "text", text }],
        sender: { senderId: "u1", senderName: "Ana", groupId: "g1" },
      });
      const done = await client.waitFor(
        (m) =>
          m.method === "turn/completed" &&
          (m.params?.turn as { id?: string })?.id === turn.id &&
          (m.params?.turn as { threadId?: string })?.threadId === threadId,
        "turn/completed",
      );
      return { id: turn.id, text: JSON.stringify(done.params) };
    };
    const sent = await turn(adapter, thread.id, 'call TgSendDocument {"filePath":"report.pdf"}');
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0], {
      threadId: thread.id,
      turnId: sent.id,
      callId: calls[0]!.callId,
      tool: "TgSendDocument",
      arguments: { filePath: "report.pdf" },
      context: { channelName: "tg", channelContext: "chat-9", senderId: "u1", groupId: "g1" },
    });
    assert.match(sent.text, /sent report\.pdf to the chat/);

    const failed = await turn(adapter, thread.id, 'call TgSendDocument {"filePath":"missing.pdf"}');
    assert.match(failed.text, /FileNotFound: no such file/);
    // Arguments that break the tool's schema never reach the adapter.
    await turn(adapter, thread.id, 'call TgSendDocument {"path":"x"}');
    assert.equal(calls.length, 2);

    // A thread of another channel is not offered the tool.
    const other = await desk.request<{ thread: { id: string } }>("thread/start", {
      identity: { channelName: "desktop", userId: "me" },
    });
    const refused = await turn(desk, other.thread.id, 'call TgSendDocument {"filePath":"report.pdf"}');
    assert.equal(calls.length, 2);
    assert.doesNotMatch(refused.text, /sent report/);
  });

  test("a server without a config directory accepts no adapter", async () => {
    const bare = new AppServerProcess({ args: ["--listen", "ws://127.0.0.1:0"], stdin: "ignore" });
    try {
      const adapter = new WsClient(await bare.websocketUrl());
      sockets.push(adapter);
      await adapter.opened;
      await adapter.initialize(adapterFor("telegram"), "telegram-adapter");
      assert.match((await adapter.closed).reason, /no config directory/);
      assert.equal(rejectedEvent(adapter)?.params?.channelName, "telegram");
      const capabilities = (await bareInit(bare)).capabilities as Record<string, unknown>;
      assert.equal(capabilities.externalChannelManagement, undefined);
    } finally {
      await bare.stop();
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function bareInit(bare: AppServerProcess): Promise<Record<string, unknown>> {
  const client = new WsClient(await bare.websocketUrl());
  sockets.push(client);
  await client.opened;
  return (await client.initialize()).result as Record<string, unknown>;
}
