import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { RpcError } from "@nexo/wire";
import { ScriptedHost } from "./helpers/scripted-host.js";

function rejectsWith(code: number, message: string) {
  return (error: unknown) => {
    assert.ok(error instanceof RpcError, `expected an RpcError, got ${String(error)}`);
    assert.equal(error.code, code, `code of: ${error.message}`);
    assert.equal(error.message, message);
    return true;
  };
}

describe("tool.invoke with a handler that answers synchronously", () => {
  let host: ScriptedHost;
  const invoke = (tool: string, args: unknown = {}) =>
    host.peer.request("tool.invoke", { plugin_id: "sync", tool_name: tool, args });

  before(async () => {
    host = new ScriptedHost("sync-tool-plugin.ts");
    await host.peer.request("initialize", { nexo_version: "0.1.5" });
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  test("its return value is the reply", async () => {
    assert.deepEqual(await invoke("sync_echo", { text: "hi" }), {
      content: [{ type: "text", text: "hi" }],
      is_error: false,
    });
  });

  test("undefined is answered null, as from an async handler", async () => {
    assert.equal(await invoke("sync_nothing"), null);
  });

  test("a typed error thrown synchronously keeps its code and is not logged as a failure", async () => {
    await assert.rejects(invoke("sync_denied"), rejectsWith(-33405, "denied: not for you"));
    assert.doesNotMatch(host.stderr, /sync_denied failed/);
  });

  test("a plain error thrown synchronously is -33403 and logged with its stack", async () => {
    await assert.rejects(invoke("sync_throw"), rejectsWith(-33403, "execution failed: sync kaboom"));
    await host.stderrMatch(/tool\.invoke sync_throw failed: Error: sync kaboom\n\s+at /);
  });

  test("a result that cannot be sent is -33403, never null", async () => {
    await assert.rejects(invoke("sync_nan"), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.code, -33403);
      assert.match(error.message, /result\.value is NaN/);
      return true;
    });
  });

  test("the context carries the plugin id, the broker and a live signal", async () => {
    assert.deepEqual(await invoke("sync_context"), {
      pluginId: "sync",
      hasBroker: true,
      signalAborted: false,
      signalIsAbortSignal: true,
    });
  });

  test("sixteen calls at once, synchronous and promised, each get their own answer", async () => {
    const calls = Array.from({ length: 16 }, (_, i) =>
      invoke(i % 2 === 0 ? "sync_echo" : "sync_later", { text: `n${i}` }),
    );
    const replies = (await Promise.all(calls)) as Array<{ content: Array<{ text: string }> }>;
    replies.forEach((reply, i) => {
      assert.equal(reply.content[0]?.text, i % 2 === 0 ? `n${i}` : `later: n${i}`);
    });
  });
});

describe("tool.invoke with an onTool handler (the invocation alone)", () => {
  let host: ScriptedHost;
  const invoke = (tool: string, args: unknown = {}) =>
    host.peer.request("tool.invoke", { plugin_id: "plain", tool_name: tool, args, agent_id: "a1" });

  before(async () => {
    host = new ScriptedHost("plain-tool-plugin.ts");
    await host.peer.request("initialize", { nexo_version: "0.1.5" });
  });
  after(async () => {
    host.assertFramesIntact();
    await host.dispose();
  });

  test("its return value is the reply", async () => {
    assert.deepEqual(await invoke("plain_echo", { text: "hi" }), {
      content: [{ type: "text", text: "hi" }],
      is_error: false,
    });
  });

  test("it is called with the invocation and nothing else", async () => {
    assert.deepEqual(await invoke("plain_arguments", { x: 1 }), {
      count: 1,
      invocation: { pluginId: "plain", toolName: "plain_arguments", args: { x: 1 }, agentId: "a1" },
    });
  });
});
