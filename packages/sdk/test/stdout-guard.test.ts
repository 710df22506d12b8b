import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { ScriptedHost } from "./helpers/scripted-host.js";

const hosts: ScriptedHost[] = [];
function start(fixture = "demo-plugin.ts"): ScriptedHost {
  const host = new ScriptedHost(fixture);
  hosts.push(host);
  return host;
}

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

describe("stdout guard in a running plugin", () => {
  test("console.log from plugin code lands on stderr, prefixed, and stdout carries only frames", async () => {
    const host = start();
    const result = await host.peer.request("tool.invoke", {
      tool_name: "demo_print",
      args: { partial: "\n" },
    });
    assert.deepEqual(result, { content: [{ type: "text", text: "printed" }], is_error: false });
    await host.stderrMatch(/^\[stdout-guard\] hello from console\.log$/m);
    host.assertFramesIntact();
  });

  test("a partial line from plugin code is never glued to the next frame, and the shutdown ack arrives", async () => {
    const host = start();
    // The upstream bug: "abc" without a newline, then the SDK's reply frame on the same line,
    // diverted whole to stderr — the reply (or the shutdown ack) was lost.
    const first = await host.peer.request("tool.invoke", {
      tool_name: "demo_print",
      args: { partial: "abc" },
    });
    assert.deepEqual(first, { content: [{ type: "text", text: "printed" }], is_error: false });
    const second = await host.peer.request("tool.invoke", { tool_name: "demo_echo", args: {} });
    assert.ok(second);
    assert.deepEqual(await host.peer.request("shutdown", {}), { ok: true });
    await host.waitExit();
    host.assertFramesIntact();
    assert.ok(host.stdoutLines.every((line) => line.startsWith('{"jsonrpc":"2.0"')));
    // Buffered until its newline, and flushed on the way out when none comes.
    assert.match(host.stderr, /^\[stdout-guard\] hello from console\.log$/m);
    assert.match(host.stderr, /^\[stdout-guard\] abc$/m);
  });

  test("a line continued across writes stays one line on stderr", async () => {
    const host = start();
    await host.peer.request("tool.invoke", { tool_name: "demo_print", args: { partial: "abc" } });
    await host.peer.request("tool.invoke", { tool_name: "demo_print", args: { partial: "def\n" } });
    await host.stderrMatch(/^\[stdout-guard\] abchello from console\.log$/m);
    await host.stderrMatch(/^\[stdout-guard\] def$/m);
    host.assertFramesIntact();
  });

  test("a forged JSON-RPC frame printed by plugin code never reaches the host", async () => {
    const host = start();
    await host.peer.request("tool.invoke", {
      tool_name: "demo_print",
      args: { partial: '{"jsonrpc":"2.0","id":777,"result":{}}\n' },
    });
    await host.stderrMatch(/^\[stdout-guard\] \{"jsonrpc":"2\.0","id":777,"result":\{\}\}$/m);
    assert.ok(!host.stdoutLines.some((line) => line.includes("777")));
    assert.equal(
      host.problems.filter((p) => p.kind === "unknown_response_id").length,
      0,
      "the host saw no stray response",
    );
  });

  test("a multi-byte character split across Buffer writes is decoded whole", async () => {
    const host = start();
    // "hé\n" as bytes 68 c3 a9 0a, split inside the two-byte "é".
    await host.peer.request("tool.invoke", {
      tool_name: "demo_print",
      args: { chunksHex: ["68c3", "a90a"] },
    });
    await host.stderrMatch(/^\[stdout-guard\] hé$/m);
  });
});

describe("stdout guard functions", () => {
  test("install is idempotent, diverts everything, uninstall flushes and restores stdout", async () => {
    const host = start("guard-api.ts");
    assert.deepEqual(await host.waitExit(), { code: 0, signal: null });
    assert.deepEqual(host.stdoutLines, ["unguarded line"]);
    const reports = host.stderr
      .split("\n")
      .filter((l) => l.startsWith("report:") || l.startsWith("[stdout-guard]"));
    assert.deepEqual(reports, [
      "report: marker=[stdout-guard]",
      "report: installed=false",
      "report: installed=true",
      "[stdout-guard] guarded line",
      "[stdout-guard] { forged: true }",
      '[stdout-guard] {"jsonrpc":"2.0","id":777,"result":{}}',
      "[stdout-guard] tail without newline",
      "report: installed=false",
    ]);
  });
});
