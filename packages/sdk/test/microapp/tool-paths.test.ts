/**
 * tools/call whichever way a handler answers (tool-paths-microapp.ts): a value returned
 * synchronously is answered without a promise in between, a promise or a thenable as before; every
 * outcome maps to the same result or error reply either way, and the handler receives its
 * arguments and its context (fields, order, a live signal that a spread copy keeps).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MicroappInternalError, MicroappRateLimitedError } from "@nexo/wire";
import { BINDING, INBOUND, ScriptedDaemon } from "../helpers/scripted-daemon.js";

describe("tools/call, every way a handler answers", () => {
  let daemon: ScriptedDaemon;
  before(async () => {
    daemon = new ScriptedDaemon({ fixture: "tool-paths-microapp.ts", extensionId: "paths" });
    await daemon.initialize();
  });
  after(async () => {
    daemon.host.assertFramesIntact();
    await daemon.dispose();
  });

  test("a value returned synchronously is the output; undefined is null, sync or async", async () => {
    assert.deepEqual(await daemon.callTool("paths_sync", { value: { n: [1, "two"] } }), {
      output: { n: [1, "two"] },
    });
    assert.deepEqual(await daemon.callTool("paths_sync", { value: "text" }), { output: "text" });
    assert.deepEqual(await daemon.callTool("paths_sync", {}), { output: null });
    assert.deepEqual(await daemon.callTool("paths_nothing_async"), { output: null });
  });

  test("a non-native thenable is followed like a promise", async () => {
    assert.deepEqual(await daemon.callTool("paths_thenable"), { output: { via: "thenable" } });
  });

  test("after an await: ToolFailure is {error}, a typed error keeps its code, a bug is -32099 and logged", async () => {
    assert.deepEqual(await daemon.callTool("paths_async_fail"), { error: "the calendar is full, later" });
    await assert.rejects(daemon.callTool("paths_async_typed"), (error: unknown) => {
      assert.ok(error instanceof MicroappRateLimitedError);
      assert.equal(error.retryAfterMs, 2500);
      return true;
    });
    await assert.rejects(daemon.callTool("paths_async_crash"), (error: unknown) => {
      assert.ok(error instanceof MicroappInternalError);
      assert.equal(error.message, "tools/call paths_async_crash failed: index out of range");
      return true;
    });
    await daemon.host.stderrMatch(
      /\[ERROR\] tools\/call paths_async_crash failed: RangeError: index out of range\n\s+at /,
    );
  });

  test("a rejection with a non-Error is -32099 with its text", async () => {
    await assert.rejects(daemon.callTool("paths_reject_value"), (error: unknown) => {
      assert.ok(error instanceof MicroappInternalError);
      assert.equal(error.message, "tools/call paths_reject_value failed: not an Error");
      return true;
    });
  });

  test("replies finished in one tick leave together (coalesced, as the plugin SDK's)", async () => {
    // Three requests in one write reach the microapp in one read. The first reply leaves at once
    // (the tick before sent one frame: a lone frame waits for nothing); the two after it are
    // corked together and leave in one write on the next tick, so they arrive in one chunk.
    const frames = [901, 902, 903].map((id) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { tool: "paths_sync", args: { value: id }, binding_context: BINDING },
      }),
    );
    const writes = async () =>
      ((await daemon.callTool("paths_writes")) as { output: { single: number; batched: number } }).output;
    const before = await writes();
    const chunks: string[] = [];
    const replied = new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        chunks.push(String(chunk));
        if (chunks.join("").includes('"id":903')) {
          daemon.host.child.stdout.off("data", onData);
          resolve();
        }
      };
      daemon.host.child.stdout.on("data", onData);
    });
    daemon.host.child.stdin.write(`${frames.join("\n")}\n`);
    await replied;
    const after = await writes();
    // The first reply alone, the other two in one batch; the count includes the reply to `before`.
    assert.deepEqual(
      { single: after.single - before.single, batched: after.batched - before.batched },
      { single: 2, batched: 1 },
    );
    const last = chunks.at(-1)!;
    assert.ok(last.includes('"id":902') && last.includes('"id":903'), `chunks: ${JSON.stringify(chunks)}`);
    assert.deepEqual(
      chunks
        .join("")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
      [901, 902, 903].map((id) => ({ jsonrpc: "2.0", id, result: { output: id } })),
    );
  });

  test("the handler gets its arguments and its context, whatever its declared length", async () => {
    const result = (await daemon.callTool("paths_context", { text: "hi" })) as { output: unknown };
    assert.deepEqual(result.output, {
      count: 2,
      args: { text: "hi" },
      keys: ["tool", "binding", "inbound", "admin", "log", "signal"],
      tool: "paths_context",
      binding: BINDING,
      inbound: INBOUND,
      admin: true,
      log: true,
      signal: true,
      sameSignal: true,
      spreadKeys: ["tool", "binding", "inbound", "admin", "log", "signal"],
      spreadSignal: true,
    });
    const without = (await daemon.callTool("paths_context", {}, { inbound: undefined })) as {
      output: { inbound: unknown; keys: string[] };
    };
    assert.equal(without.output.inbound, null);
    assert.ok(without.output.keys.includes("inbound"), "the key is there, undefined");
  });
});
