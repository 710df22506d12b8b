import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { RpcError } from "@nexo/wire";
import { plugin } from "@nexo/wire/schemas";
import { ScriptedHost } from "./helpers/scripted-host.js";

const hosts: ScriptedHost[] = [];
function start(env?: Record<string, string>): ScriptedHost {
  const host = new ScriptedHost("demo-plugin.ts", { env });
  hosts.push(host);
  return host;
}

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** Index of the first stdout frame satisfying `match`. */
function frameIndex(host: ScriptedHost, match: (frame: Record<string, unknown>) => boolean): number {
  return host.stdoutLines.findIndex((line) => match(JSON.parse(line) as Record<string, unknown>));
}

describe("initialize", () => {
  test("replies the whole manifest as JSON, server_version <id>-<version>, and the tool catalog in order", async () => {
    const host = start();
    const result = await host.peer.request("initialize", { nexo_version: "0.1.5" });
    const parsed = plugin.InitializeResultSchema.parse(result);
    assert.equal(parsed.server_version, "demo-0.2.0");
    const manifestPlugin = parsed.manifest.plugin as Record<string, unknown>;
    assert.equal(manifestPlugin.id, "demo");
    assert.equal(
      manifestPlugin.released,
      "2026-05-01T12:30:00.000Z",
      "a TOML datetime is echoed as an ISO string",
    );
    assert.deepEqual((manifestPlugin.channels as { register: unknown[] }).register, [
      { kind: "loopback", adapter: "LoopbackAdapter" },
    ]);
    assert.deepEqual(
      parsed.tools?.map((t) => t.name),
      [
        "demo_echo",
        "demo_fail",
        "demo_nan",
        "demo_sleep",
        "demo_hang",
        "demo_recall",
        "demo_print",
        "demo_big",
        "demo_info",
        "demo_context",
      ],
    );
    assert.deepEqual(parsed.tools?.[0]?.input_schema, {
      type: "object",
      properties: { text: { type: "string" } },
    });
    assert.deepEqual(parsed.tools?.[1]?.input_schema, {});
  });

  test("the host's nexo_version is kept; adapter.broker works outside event handlers", async () => {
    const host = start();
    const before = (await host.peer.request("tool.invoke", { tool_name: "demo_info", args: {} })) as Record<
      string,
      unknown
    >;
    assert.deepEqual(before, { hostNexoVersion: null, pluginId: "demo" });
    await host.peer.request("initialize", { nexo_version: "0.1.5" });
    const after = (await host.peer.request("tool.invoke", { tool_name: "demo_info", args: {} })) as Record<
      string,
      unknown
    >;
    assert.equal(after.hostNexoVersion, "0.1.5");
    const published = await host.waitPublished(2);
    assert.deepEqual(published[1]?.event.payload, { via: "adapter.broker" });
  });

  test("can be repeated, and tool calls are served before it", async () => {
    const host = start();
    assert.ok(await host.peer.request("tool.invoke", { tool_name: "demo_echo", args: {} }));
    await host.peer.request("initialize", {});
    await host.peer.request("initialize", null);
  });

  test("params of the wrong type are -32602", async () => {
    const host = start();
    await assert.rejects(
      host.peer.request("initialize", { nexo_version: 5 }),
      (e: unknown) => e instanceof RpcError && e.code === -32602,
    );
  });
});

describe("shutdown", () => {
  test("drains in-flight work, runs onShutdown, replies {ok:true}, and the process exits by itself", async () => {
    const host = start();
    const slow = host.peer.request("tool.invoke", { tool_name: "demo_sleep", args: { ms: 300 } });
    const ack = await host.peer.request("shutdown", { reason: "host requested" });
    assert.deepEqual(ack, { ok: true });
    assert.deepEqual(await slow, { content: [{ type: "text", text: "slept 300 ms" }], is_error: false });
    const toolReply = frameIndex(
      host,
      (f) => f.result !== undefined && JSON.stringify(f.result).includes("slept"),
    );
    const ackReply = frameIndex(host, (f) => JSON.stringify(f.result) === '{"ok":true}');
    assert.ok(toolReply !== -1 && toolReply < ackReply, "the drained reply precedes the ack");
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
    assert.match(host.stderr, /demo: onShutdown ran\n(.|\n)*demo: run\(\) resolved/);
    host.assertFramesIntact();
  });

  test("pending calls to the host are abandoned at once with RpcTransportError", async () => {
    const host = start();
    host.peer.onRequest("memory.recall", () => new Promise(() => {}));
    const call = host.peer.request("tool.invoke", {
      tool_name: "demo_recall",
      args: { agent: "a", query: "q" },
    });
    await host.until("the memory.recall request", () =>
      host.stdoutLines.some((l) => l.includes('"memory.recall"')) ? true : undefined,
    );
    const started = Date.now();
    const failed = assert.rejects(call, (e: unknown) => {
      assert.ok(e instanceof RpcError);
      assert.equal(e.code, -33403);
      assert.equal(e.message, "execution failed: adapter shutting down");
      return true;
    });
    await host.peer.request("shutdown", {});
    await failed;
    assert.ok(Date.now() - started < 15_000, "not the 30 s call timeout"); // loose: the machine may be loaded
  });

  test("a host call made during the drain is still answered", async () => {
    const host = start();
    host.peer.onRequest("memory.recall", () => ({ entries: [{ id: "m", agent_id: "a", content: "late" }] }));
    const call = host.peer.request("tool.invoke", {
      tool_name: "demo_recall",
      args: { agent: "a", query: "q", delayMs: 200 },
    });
    await host.peer.request("shutdown", {});
    const result = (await call) as { entries: Array<{ content: string }> };
    assert.equal(result.entries[0]?.content, "late");
  });

  test("new requests during the drain are refused, new events dropped", async () => {
    const host = start();
    const slow = host.peer.request("tool.invoke", { tool_name: "demo_sleep", args: { ms: 400 } });
    const ack = host.peer.request("shutdown", {});
    // The shutdown frame is written before the next request, and the plugin reads in order.
    await assert.rejects(
      host.peer.request("tool.invoke", { tool_name: "demo_echo", args: {} }),
      (e: unknown) => {
        assert.ok(e instanceof RpcError);
        assert.equal(e.code, -33403);
        assert.match(e.message, /shutting down/);
        return true;
      },
    );
    await host.peer.notify("broker.event", {
      topic: "plugin.outbound.loopback",
      event: { topic: "plugin.outbound.loopback", source: "s", payload: {} },
    });
    await host.stderrMatch(/broker\.event during shutdown dropped/);
    await slow;
    assert.deepEqual(await ack, { ok: true });
    assert.equal(host.published.length, 0);
  });

  test("a hung handler is abandoned at the drain bound: error reply, then the ack, then exit", async () => {
    const host = start({ DEMO_DRAIN_MS: "400" });
    // The child's start-up (tsx compiling the fixture) must not count against the drain bound.
    await host.peer.request("initialize", {});
    const hung = host.peer.request("tool.invoke", { tool_name: "demo_hang", args: {} });
    const abandoned = assert.rejects(hung, (e: unknown) => {
      assert.ok(e instanceof RpcError);
      assert.equal(e.code, -33403);
      assert.match(
        e.message,
        /abandoned: the plugin shut down before this call finished \(drain bound 400 ms\)/,
      );
      return true;
    });
    const started = Date.now();
    assert.deepEqual(await host.peer.request("shutdown", {}), { ok: true });
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 350 && elapsed < 15_000, `ack after ${elapsed} ms`);
    await abandoned;
    const errorReply = frameIndex(host, (f) => f.error !== undefined);
    const ackReply = frameIndex(host, (f) => JSON.stringify(f.result) === '{"ok":true}');
    assert.ok(errorReply !== -1 && errorReply < ackReply, "the abandoned call is answered before the ack");
    await host.stderrMatch(
      /abandoned 1 handler\(s\) still running after 400 ms \{"abandoned":\["tool\.invoke demo_hang"\]\}/,
    );
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
  });

  test("an onShutdown that never settles does not hold the ack past the bound", async () => {
    const host = start({ DEMO_DRAIN_MS: "300", DEMO_SHUTDOWN_HANG: "1" });
    await host.peer.request("initialize", {});
    const started = Date.now();
    assert.deepEqual(await host.peer.request("shutdown", {}), { ok: true });
    assert.ok(Date.now() - started < 15_000);
    await host.stderrMatch(/onShutdown did not finish within 300 ms/);
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
  });

  test("frames after the ack are not answered", async () => {
    const host = start();
    await host.peer.request("shutdown", {});
    host.writeRaw('{"jsonrpc":"2.0","id":99,"method":"tool.invoke","params":{"tool_name":"demo_echo"}}\n');
    await host.waitExit();
    assert.equal(
      frameIndex(host, (f) => f.id === 99),
      -1,
    );
  });
});

describe("end of input and signals", () => {
  test("stdin EOF drains in-flight work, runs onShutdown and ends run()", async () => {
    const host = start();
    await host.peer.request("initialize", {});
    void host.peer
      .request("tool.invoke", { tool_name: "demo_sleep", args: { ms: 200 } })
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    host.child.stdin.end();
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
    assert.match(host.stderr, /demo: onShutdown ran\n(.|\n)*demo: run\(\) resolved/);
  });

  test("SIGTERM takes the same path and the process exits 0", async () => {
    const host = start();
    await host.peer.request("initialize", {});
    host.child.kill("SIGTERM");
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
    assert.match(host.stderr, /received SIGTERM(.|\n)*demo: onShutdown ran\n(.|\n)*demo: run\(\) resolved/);
  });

  test("run() can only be called once", async () => {
    const host = start({ DEMO_RUN_TWICE: "1" });
    await host.stderrMatch(/demo: second run\(\) threw PluginError: PluginAdapter\.run\(\) already invoked/);
    assert.deepEqual(await host.peer.request("shutdown", {}), { ok: true });
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
  });
});
