/**
 * `nexo app-server`'s fast start (cli/app-server-fast.ts): the first `initialize` is answered
 * before the door loads, with the same bytes the door sends, and the door then carries on the same
 * connection as if it had answered it — a second `initialize` is -32003, several messages in the
 * first write are all served in order, a turn runs, stdin's end right after the answer still exits
 * 0. What the fast check does not fully understand is left to the door (compared here against a
 * launch whose first line the fast start declines), and which launches start fast is pinned.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { MockLlmServer } from "@nexo/mock-llm";
import { InitializeParamsSchema } from "@nexo/wire/schemas/appserver";
import { fastAppServerFlags, fastInitialize, fastInitializeAnswer } from "../../src/cli/app-server-fast.js";
import { coreCapabilities } from "../../src/doors/appserver/capability-flags.js";
import { CORE_FAMILIES } from "../../src/doors/appserver/families/core.js";
import { familyCapabilities } from "../../src/doors/appserver/family.js";
import type { AppServerHost } from "../../src/doors/appserver/host.js";
import { PROTOCOL_VERSION } from "../../src/doors/appserver/host.js";
import { NEXO_VERSION } from "../../src/version.js";
import { AppServerProcess } from "../helpers/appserver-client.js";

const line = (message: unknown): string => `${JSON.stringify(message)}\n`;
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    clientInfo: { name: "dotcraft-desktop", title: "Desktop", version: "0.1.0" },
    capabilities: {
      approvalSupport: true,
      streamingSupport: true,
      optOutNotificationMethods: ["item/reasoning/delta"],
    },
  },
};

describe("the fast initialize check", () => {
  test("accepts the handshakes clients send, and each is one the door's schema takes", () => {
    const accepted = [
      INITIALIZE,
      { jsonrpc: "2.0", id: "a", method: "initialize", params: { clientInfo: { name: "c", version: "" } } },
      {
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params: { clientInfo: { name: "c", version: "1" }, capabilities: {} },
      },
    ];
    for (const message of accepted) {
      const found = fastInitialize(Buffer.from(JSON.stringify(message)));
      assert.ok(found, JSON.stringify(message));
      assert.equal(found.id, message.id);
      assert.ok(InitializeParamsSchema.safeParse(found.params).success);
    }
  });

  test("leaves to the door whatever it does not fully know", () => {
    const declined: unknown[] = [
      "{not json",
      "",
      `${JSON.stringify(INITIALIZE)}\r`,
      [INITIALIZE],
      { ...INITIALIZE, method: "thread/list" },
      { ...INITIALIZE, jsonrpc: undefined },
      { ...INITIALIZE, id: null },
      { ...INITIALIZE, extra: 1 },
      { ...INITIALIZE, params: undefined },
      { ...INITIALIZE, params: { clientInfo: { name: "", version: "1" } } },
      { ...INITIALIZE, params: { clientInfo: { name: "c" } } },
      { ...INITIALIZE, params: { clientInfo: { name: "c", version: "1", flavour: "x" } } },
      { ...INITIALIZE, params: { clientInfo: { name: "c", version: "1" }, other: true } },
      {
        ...INITIALIZE,
        params: { clientInfo: { name: "c", version: "1" }, capabilities: { futureFlag: true } },
      },
      {
        ...INITIALIZE,
        params: {
          clientInfo: { name: "c", version: "1" },
          capabilities: { channelAdapter: { channelName: "x" } },
        },
      },
      {
        ...INITIALIZE,
        params: { clientInfo: { name: "c", version: "1" }, capabilities: { approvalSupport: 1 } },
      },
      {
        ...INITIALIZE,
        params: { clientInfo: { name: "c", version: "1" }, capabilities: { optOutNotificationMethods: [1] } },
      },
    ];
    for (const message of declined) {
      const text = typeof message === "string" ? message : JSON.stringify(message);
      assert.equal(fastInitialize(Buffer.from(text)), undefined, text);
    }
    assert.equal(fastInitialize(Buffer.from([0x7b, 0xff, 0x7d])), undefined, "invalid UTF-8");
  });

  test("answers with the core families' own flags, merged as the door merges them", () => {
    const host = { management: undefined } as unknown as AppServerHost;
    const families = familyCapabilities(CORE_FAMILIES, host);
    assert.equal(JSON.stringify(coreCapabilities()), JSON.stringify(families));
    const answer = JSON.parse(fastInitializeAnswer({ id: 3, params: {} })) as Record<string, unknown>;
    assert.deepEqual(answer, {
      jsonrpc: "2.0",
      id: 3,
      result: {
        serverInfo: { name: "nexo", version: NEXO_VERSION, protocolVersion: PROTOCOL_VERSION },
        capabilities: families,
      },
    });
  });

  test("starts fast only a stdio launch without --config, --listen, a token or an unknown flag", () => {
    const dir = mkdtempSync(join(tmpdir(), "nexo-as-fast-flags-"));
    try {
      assert.deepEqual(fastAppServerFlags([], {}), {});
      assert.deepEqual(fastAppServerFlags(["--workspace", dir, "--provider=scripted", "--model", "m"], {}), {
        workspace: dir,
        provider: "scripted",
        model: "m",
      });
      for (const args of [
        ["--help"],
        ["--config", dir],
        ["--listen", "stdio://"],
        ["--token", "0123456789abcdef0123"],
        ["--workspace", join(dir, "missing")],
        ["--workspace"],
        ["--workspace", "--model"],
        ["--log-format", "json"],
        ["extra"],
        ["--"],
      ]) {
        assert.equal(fastAppServerFlags(args, {}), undefined, args.join(" "));
      }
      assert.equal(fastAppServerFlags([], { NEXO_APPSERVER_TOKEN: "0123456789abcdef0123" }), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("nexo app-server answering its first initialize fast", () => {
  let mock: MockLlmServer;
  const processes: AppServerProcess[] = [];
  before(async () => {
    mock = new MockLlmServer({ script: [{ text: "Hello from the model." }] });
    await mock.start();
  });
  after(async () => {
    await mock.close();
  });
  afterEach(async () => {
    for (const p of processes.splice(0)) await p.stop();
  });
  const start = (): AppServerProcess => {
    const server = new AppServerProcess({
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: mock.url },
    });
    processes.push(server);
    return server;
  };

  test("the fast answer is the door's answer, byte for byte", async () => {
    const fast = start();
    fast.child.stdin.write(line(INITIALIZE));
    await fast.waitFor((m) => m.id === 1, "the fast answer");
    // A capability the fast check does not know: the door answers this one.
    const declinedInit = {
      ...INITIALIZE,
      params: { ...INITIALIZE.params, capabilities: { ...INITIALIZE.params.capabilities, futureFlag: true } },
    };
    assert.equal(fastInitialize(Buffer.from(JSON.stringify(declinedInit))), undefined);
    const door = start();
    door.child.stdin.write(line(declinedInit));
    await door.waitFor((m) => m.id === 1, "the door's answer");
    assert.equal(fast.stdout, door.stdout);
  });

  test("initialize, initialized and two requests in one write are all served; a turn runs", async () => {
    const server = start();
    const identity = { channelName: "t", userId: "u", workspacePath: server.workspace };
    server.child.stdin.write(
      line(INITIALIZE) +
        line({ jsonrpc: "2.0", method: "initialized", params: {} }) +
        line({ jsonrpc: "2.0", id: 2, method: "thread/start", params: { identity, historyMode: "server" } }) +
        line({ jsonrpc: "2.0", id: 3, method: "initialize", params: INITIALIZE.params }),
    );
    const again = await server.waitFor((m) => m.id === 3, "the second initialize's answer");
    assert.equal(again.error?.code, -32003);
    const started = await server.waitFor((m) => m.id === 2, "thread/start's answer");
    assert.equal(server.received[0]!.id, 1, "the initialize answer comes first");
    // thread/start opens the store, so the synchronous -32003 may overtake it; its event follows it.
    const startedAt = server.received.indexOf(started);
    const event = await server.waitFor((m) => m.method === "thread/started", "thread/started");
    assert.ok(server.received.indexOf(event) > startedAt);
    const replies = [server.received[0]!, started];
    const thread = (replies[1]!.result as { thread: { id: string } }).thread;
    // Ids of its own: the client's counter would start again at 1.
    server.send({
      id: 10,
      method: "turn/start",
      params: { threadId: thread.id, input: [{ type: "text", text: "hi" }] },
    });
    const turn = await server.waitFor((m) => m.id === 10, "turn/start's answer");
    assert.ok((turn.result as { turn?: unknown } | undefined)?.turn, JSON.stringify(turn));
    const done = await server.waitFor((m) => m.method === "turn/completed", "turn/completed");
    assert.match(JSON.stringify(done), /completed/);
    assert.ok(
      server.received.some((m) => JSON.stringify(m).includes("Hello from the model.")),
      "the model's answer reached the client",
    );
  });

  test("stdin's end right after initialize: the answer, then exit 0", async () => {
    const server = start();
    server.child.stdin.end(line(INITIALIZE));
    const exit = await server.exited;
    assert.equal(exit.code, 0, server.stderr);
    assert.equal(server.received.length, 1);
    assert.ok(server.received[0]!.result);
  });

  test("SIGTERM right after the answer: exit 0", async () => {
    const server = start();
    server.child.stdin.write(line(INITIALIZE));
    await server.waitFor((m) => m.id === 1, "the answer");
    server.kill("SIGTERM");
    const exit = await server.exited;
    assert.equal(exit.code, 0, server.stderr);
  });

  test("SIGTERM while the door is still loading, after the fast answer: exit 0 every time", async () => {
    // The fast start's own handler gave way to the door's with a moment of none in between, and a
    // SIGTERM caught while the door loaded was dropped with Node's signal watcher: the process
    // stayed, idle, until killed (before the fix 55 of 80 such launches hung, signalled 6-40 ms
    // after the answer). Signalled at several moments of the load, each must leave with 0.
    const delays = [5, 10, 20, 30, 45];
    const servers = delays.map(() => start());
    const exits = await Promise.all(
      servers.map(async (server, i) => {
        server.child.stdin.write(line(INITIALIZE));
        await server.waitFor((m) => m.id === 1, "the fast answer");
        server.notify("initialized");
        await new Promise((resolve) => setTimeout(resolve, delays[i]));
        const since = Date.now();
        server.kill("SIGTERM");
        const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
        const exit = await server.exited;
        clearTimeout(timer);
        return { ...exit, delay: delays[i], ms: Date.now() - since, stderr: server.stderr };
      }),
    );
    for (const exit of exits) assert.equal(exit.code, 0, JSON.stringify(exit));
  });

  test("a first line the fast check declines goes to the door unchanged", async () => {
    const server = start();
    server.sendRaw(`${JSON.stringify(INITIALIZE)}\r`);
    const reply = await server.waitFor((m) => m.id === 1, "the door's answer to a CRLF line");
    assert.ok(reply.result);
    server.sendRaw("{not json");
    const parseError = await server.waitFor((m) => m.id === null, "the parse error");
    assert.equal(parseError.error?.code, -32700);
    server.notify("initialized");
    const listed = await server.call("thread/list", {
      identity: { channelName: "t", userId: "u", workspacePath: server.workspace },
    });
    assert.ok(listed.result, JSON.stringify(listed));
  });
});
