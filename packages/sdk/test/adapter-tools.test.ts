import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  InvalidParamsError,
  MethodNotFoundError,
  RpcError,
  ToolArgumentInvalidError,
  ToolDeniedError,
  ToolExecutionFailedError,
  ToolNotFoundError,
  ToolUnavailableError,
} from "@nexo/wire";
import { ScriptedHost } from "./helpers/scripted-host.js";

function rejectsWith(code: number, check?: (e: RpcError) => void) {
  return (error: unknown) => {
    assert.ok(error instanceof RpcError, `expected an RpcError, got ${String(error)}`);
    assert.equal(error.code, code, `code of: ${error.message}`);
    check?.(error);
    return true;
  };
}

describe("tool.invoke against a real SDK plugin", () => {
  let host: ScriptedHost;
  before(async () => {
    host = new ScriptedHost("demo-plugin.ts");
    await host.peer.request("initialize", { nexo_version: "0.1.5" });
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  test("success: the handler gets the decoded invocation and its result is the reply", async () => {
    const result = (await host.peer.request("tool.invoke", {
      plugin_id: "demo",
      tool_name: "demo_echo",
      args: { text: "hi" },
      agent_id: "shopper",
    })) as Record<string, unknown>;
    assert.deepEqual(result.content, [{ type: "text", text: 'echo: {"text":"hi"}' }]);
    assert.equal(result.is_error, false);
    assert.deepEqual(result.invocation, {
      pluginId: "demo",
      toolName: "demo_echo",
      args: { text: "hi" },
      agentId: "shopper",
    });
  });

  test("the handler's context spreads into a copy with its signal and nothing internal", async () => {
    const result = await host.peer.request("tool.invoke", { tool_name: "demo_context", args: {} });
    assert.deepEqual(result, { keys: ["broker", "pluginId", "signal"], signal: true, sameSignal: true });
  });

  test("absent plugin_id, args and agent_id read as the manifest id, null and undefined", async () => {
    const result = (await host.peer.request("tool.invoke", { tool_name: "demo_echo" })) as Record<
      string,
      unknown
    >;
    assert.deepEqual(result.invocation, { pluginId: "demo", toolName: "demo_echo", args: null });
  });

  test("each typed error maps to its code, message prefix and data", async () => {
    const call = (kind: string) =>
      host.peer.request("tool.invoke", { tool_name: "demo_fail", args: { kind } });
    await assert.rejects(
      call("not_found"),
      rejectsWith(-33401, (e) => {
        assert.ok(e instanceof ToolNotFoundError);
        assert.equal(e.message, "tool not found: demo_fail");
        assert.equal(e.data, undefined);
      }),
    );
    await assert.rejects(
      call("invalid"),
      rejectsWith(-33402, (e) => {
        assert.ok(e instanceof ToolArgumentInvalidError);
        assert.equal(e.message, "invalid argument: city is required");
        assert.deepEqual(e.data, { details: { field: "city" } });
      }),
    );
    await assert.rejects(
      call("failed"),
      rejectsWith(-33403, (e) => {
        assert.ok(e instanceof ToolExecutionFailedError);
        assert.equal(e.message, "execution failed: backend down");
      }),
    );
    await assert.rejects(
      call("unavailable"),
      rejectsWith(-33404, (e) => {
        assert.ok(e instanceof ToolUnavailableError);
        assert.equal(e.message, "unavailable: busy");
        assert.deepEqual(e.data, { retry_after_ms: 1500 });
      }),
    );
    await assert.rejects(
      call("denied"),
      rejectsWith(-33405, (e) => {
        assert.ok(e instanceof ToolDeniedError);
        assert.equal(e.message, "denied: tenant not allowed");
      }),
    );
    await assert.rejects(
      call("base"),
      rejectsWith(-33403, (e) => assert.equal(e.message, "plain tool error")),
    );
  });

  test("a generic exception is -33403 'execution failed: …' and its stack is logged", async () => {
    await assert.rejects(
      host.peer.request("tool.invoke", { tool_name: "demo_fail", args: { kind: "generic" } }),
      rejectsWith(-33403, (e) => assert.equal(e.message, "execution failed: kaboom")),
    );
    await host.stderrMatch(/plugin: error: tool\.invoke demo_fail failed: Error: kaboom\n\s+at /);
  });

  test("a declared tool the handler does not know answers -33401", async () => {
    await assert.rejects(
      host.peer.request("tool.invoke", { tool_name: "demo_missing", args: {} }),
      rejectsWith(-33401, (e) => assert.equal(e.message, "tool not found: demo_missing")),
    );
  });

  test("a result containing NaN is rejected with an error reply, never sent as null", async () => {
    await assert.rejects(
      host.peer.request("tool.invoke", { tool_name: "demo_nan", args: {} }),
      rejectsWith(-33403, (e) =>
        assert.match(e.message, /result\.score is NaN, which JSON cannot represent/),
      ),
    );
    assert.ok(!host.stdoutLines.some((line) => line.includes('"score":null')));
  });

  test("a result over the outbound frame cap is an error reply, not a frame the host would drop", async () => {
    await assert.rejects(
      host.peer.request("tool.invoke", { tool_name: "demo_big", args: { chars: 1_100_000 } }),
      rejectsWith(-33403, (e) => assert.match(e.message, /over the 1048576-byte frame limit/)),
    );
    const fits = (await host.peer.request("tool.invoke", {
      tool_name: "demo_big",
      args: { chars: 1_000_000 },
    })) as {
      content: Array<{ text: string }>;
    };
    assert.equal(fits.content[0]?.text.length, 1_000_000);
  });

  test("invalid params are -32602 naming the field", async () => {
    await assert.rejects(
      host.peer.request("tool.invoke", { args: {} }),
      rejectsWith(-32602, (e) => {
        assert.ok(e instanceof InvalidParamsError);
        assert.match(e.message, /tool_name/);
      }),
    );
    await assert.rejects(host.peer.request("tool.invoke", [1, 2]), rejectsWith(-32602));
  });

  test("a tool calls the host mid-invocation: memory.recall answered by the scripted host", async () => {
    host.peer.onRequest("memory.recall", (params) => {
      const p = params as { agent_id: string; query: string; limit: number };
      if (p.agent_id === "denied") throw new RpcError(-32010, "no grant for this agent's memory");
      return {
        entries: [
          {
            id: "m1",
            agent_id: p.agent_id,
            content: `about ${p.query}`,
            tags: ["t"],
            created_at: "2026-04-30T18:22:31Z",
          },
          { id: "m2", agent_id: p.agent_id, content: "sparse entry" },
        ],
      };
    });
    const result = (await host.peer.request("tool.invoke", {
      tool_name: "demo_recall",
      args: { agent: "ventas", query: "tone" },
    })) as { entries: unknown[] };
    assert.deepEqual(result.entries, [
      {
        id: "m1",
        agent_id: "ventas",
        content: "about tone",
        tags: ["t"],
        concept_tags: [],
        created_at: "2026-04-30T18:22:31Z",
        memory_type: null,
      },
      {
        id: "m2",
        agent_id: "ventas",
        content: "sparse entry",
        tags: [],
        concept_tags: [],
        created_at: "",
        memory_type: null,
      },
    ]);
    // The host's refusal reaches the tool as RpcServerError; thrown on, it becomes -33403.
    await assert.rejects(
      host.peer.request("tool.invoke", { tool_name: "demo_recall", args: { agent: "denied", query: "x" } }),
      rejectsWith(-33403, (e) => assert.match(e.message, /rpc error -32010: no grant/)),
    );
  });

  test("a host call that gets no reply fails with RpcTimeoutError after the call's timeoutMs", async () => {
    host.peer.onRequest("memory.recall", () => new Promise(() => {}));
    const started = Date.now();
    await assert.rejects(
      host.peer.request("tool.invoke", {
        tool_name: "demo_recall",
        args: { agent: "a", query: "q", timeoutMs: 300 },
      }),
      rejectsWith(-33403, (e) => assert.match(e.message, /no host reply within 0\.3s/)),
    );
    assert.ok(Date.now() - started < 15_000);
  });

  test("calls are served concurrently and answered in completion order", async () => {
    const order: string[] = [];
    const slow = host.peer
      .request("tool.invoke", { tool_name: "demo_sleep", args: { ms: 400 } })
      .then(() => order.push("slow"));
    const fast = host.peer
      .request("tool.invoke", { tool_name: "demo_sleep", args: { ms: 10 } })
      .then(() => order.push("fast"));
    await Promise.all([slow, fast]);
    assert.deepEqual(order, ["fast", "slow"]);
  });

  test("an unknown method is -32601", async () => {
    await assert.rejects(
      host.peer.request("tool.nope", {}),
      rejectsWith(-32601, (e) => assert.ok(e instanceof MethodNotFoundError)),
    );
  });

  test("nothing but whole JSON frames reached stdout", () => {
    host.assertFramesIntact();
    assert.ok(host.stdoutLines.length > 10);
  });
});
