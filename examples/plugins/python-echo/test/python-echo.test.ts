import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { JsonRpcCode, RpcError, ToolCode } from "@nexo/wire";
import { plugin as schemas } from "@nexo/wire/schemas";
import { PluginProcess } from "../../test-helpers/plugin-process.js";

function rejectsWithCode(code: number, check?: (error: RpcError) => void) {
  return (error: unknown) => {
    assert.ok(error instanceof RpcError, `expected an RpcError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    check?.(error);
    return true;
  };
}

describe("python-echo: the contract by hand, in plain Python", () => {
  let plugin: PluginProcess;
  const invoke = (toolName: string, args?: unknown) =>
    plugin.peer.request("tool.invoke", { plugin_id: "pyecho", tool_name: toolName, args, agent_id: "a1" });

  before(async () => {
    plugin = await PluginProcess.start("python-echo");
  });
  after(async () => {
    await plugin.dispose();
  });

  test("initialize echoes the manifest and advertises the declared tools", async () => {
    const reply = await plugin.initialize();
    assert.ok(schemas.InitializeResultSchema.safeParse(reply).success, JSON.stringify(reply));
    assert.equal(reply.server_version, "pyecho-0.1.0");
    assert.deepEqual(
      (reply.tools as Array<{ name: string }>).map((t) => t.name),
      plugin.manifest.manifest.plugin.extends?.tools,
    );
    const echoed = reply.manifest as { plugin: { entrypoint: { command: string } } };
    assert.equal(echoed.plugin.entrypoint.command, "python3");
  });

  test("pyecho_echo and pyecho_reverse answer with the conventional text result", async () => {
    assert.deepEqual(await invoke("pyecho_echo", { text: "héllo, wörld 👋" }), {
      content: [{ type: "text", text: "héllo, wörld 👋" }],
      is_error: false,
    });
    assert.deepEqual(await invoke("pyecho_reverse", { text: "abc déf" }), {
      content: [{ type: "text", text: "féd cba" }],
      is_error: false,
    });
  });

  test("bad arguments are -33402 with {path, message} details", async () => {
    await assert.rejects(
      invoke("pyecho_echo", { text: 42, loud: true }),
      rejectsWithCode(ToolCode.argumentInvalid, (error) => {
        assert.deepEqual((error.data as { details: unknown }).details, [
          { path: "/loud", message: "is not an argument of pyecho_echo (expected text)" },
          { path: "/text", message: "must be a string" },
        ]);
      }),
    );
    await assert.rejects(invoke("pyecho_reverse"), rejectsWithCode(ToolCode.argumentInvalid));
    await assert.rejects(invoke("pyecho_reverse", [1]), rejectsWithCode(ToolCode.argumentInvalid));
  });

  test("an unknown tool is -33401; params without tool_name are -32602", async () => {
    await assert.rejects(invoke("pyecho_shout", { text: "x" }), rejectsWithCode(ToolCode.notFound));
    await assert.rejects(
      plugin.peer.request("tool.invoke", { args: {} }),
      rejectsWithCode(JsonRpcCode.invalidParams),
    );
  });

  test("an unknown method is -32601; unknown notifications and junk lines are ignored", async () => {
    await assert.rejects(
      plugin.peer.request("llm.chat", { provider: "x" }),
      rejectsWithCode(JsonRpcCode.methodNotFound, (error) => assert.match(error.message, /llm\.chat/)),
    );
    await plugin.peer.notify("something.new", { a: 1 });
    await plugin.peer.notify("broker.event", {
      topic: "plugin.outbound.x",
      event: { topic: "plugin.outbound.x", source: "test", payload: {} },
    });
    plugin.child.stdin.write("not json\n[1,2]\n\n");
    plugin.child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 99, method: "x", params: "y".repeat(1 << 20) })}\n`,
    );
    await plugin.stderrMatch(/notification something\.new ignored/);
    await plugin.stderrMatch(/a frame must be a JSON object/);
    await plugin.stderrMatch(/line over 1048576 bytes dropped/);
    // Still serving, and nothing but replies ever came back.
    assert.deepEqual(await invoke("pyecho_echo", { text: "still here" }), {
      content: [{ type: "text", text: "still here" }],
      is_error: false,
    });
    assert.deepEqual(plugin.problems, []);
  });

  test("shutdown is acknowledged, then the process exits 0", async () => {
    const { reply, exit } = await plugin.shutdown();
    assert.deepEqual(reply, { ok: true });
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.match(plugin.stderr, /pyecho: shutdown acknowledged/);
  });
});

describe("python-echo: end of input", () => {
  let plugin: PluginProcess | undefined;
  afterEach(async () => {
    await plugin?.dispose();
  });

  test("stdin closing ends the plugin cleanly, without a shutdown request", async () => {
    plugin = await PluginProcess.start("python-echo");
    await plugin.initialize();
    plugin.child.stdin.end();
    const exit = await plugin.until("exit after EOF", () =>
      plugin!.child.exitCode === null ? undefined : plugin!.child.exitCode,
    );
    assert.equal(exit, 0);
    await plugin.stderrMatch(/stdin closed; exiting/);
  });
});
