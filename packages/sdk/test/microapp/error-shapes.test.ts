/**
 * Issue 10.2, for the microapp SDK: every error a microapp built on it writes has exactly the keys
 * the microapp contract gives it — `{code, message}`, with `data` only for a typed error that
 * carries some (the rate limit's `retry_after_ms`) — because strict daemons compare the error
 * object's keys. Checked on the raw line a real child process wrote.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { assertErrorKeys, rawReply } from "../helpers/raw-reply.js";
import { BINDING, ScriptedDaemon, type ScriptedDaemonOptions } from "../helpers/scripted-daemon.js";

const daemons: ScriptedDaemon[] = [];
function start(options: ScriptedDaemonOptions = {}): ScriptedDaemon {
  const daemon = new ScriptedDaemon(options);
  daemons.push(daemon);
  return daemon;
}
afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

let id = 9000;
const initParams = (daemon: ScriptedDaemon, extra: Record<string, unknown> = {}) => ({
  extension_id: daemon.extensionId,
  state_dir: daemon.stateDir,
  config: {},
  ...extra,
});
const call = (daemon: ScriptedDaemon, tool: string, args: unknown = {}) =>
  rawReply(daemon.host, ++id, "tools/call", { tool, args, binding_context: BINDING });

describe("microapp error shapes on the wire", () => {
  test("an unknown method, with a numeric or a null id, and an unregistered hook are exactly {code: -32601, message}", async () => {
    const daemon = start();
    const unknown = await rawReply(daemon.host, ++id, "tools/describe", {});
    assertErrorKeys(unknown, -32601);
    assert.equal(unknown.error!.message, "method not found: tools/describe");
    assertErrorKeys(await rawReply(daemon.host, null, "nexo/future", {}), -32601);
    assertErrorKeys(await rawReply(daemon.host, ++id, "hooks/after_message", {}), -32601);
  });

  test("initialize refusals: bad params, a foreign extension id, a failing config, a second initialize", async () => {
    const daemon = start();
    assertErrorKeys(await rawReply(daemon.host, ++id, "initialize", { state_dir: 5 }), -32602);
    assertErrorKeys(
      await rawReply(daemon.host, ++id, "initialize", initParams(daemon, { extension_id: "other" })),
      -32602,
    );
    assertErrorKeys(
      await rawReply(daemon.host, ++id, "initialize", initParams(daemon, { config: { greeting: 42 } })),
      -32602,
    );
    assertErrorKeys(await call(daemon, "probe_echo"), -32600);
    const ok = await rawReply(daemon.host, ++id, "initialize", initParams(daemon));
    assert.ok(ok.result !== undefined, JSON.stringify(ok));
    assertErrorKeys(await rawReply(daemon.host, ++id, "initialize", initParams(daemon)), -32600);
  });

  test("onInitialize throwing is exactly {code: -32099, message}", async () => {
    const daemon = start({ env: { PROBE_INIT_FAIL: "1" } });
    assertErrorKeys(await rawReply(daemon.host, ++id, "initialize", initParams(daemon)), -32099);
  });

  test("tools/call and hook failures: data only on the typed error that carries it", async () => {
    const daemon = start();
    await daemon.initialize();
    assertErrorKeys(await call(daemon, "probe_nope"), -32602);
    assertErrorKeys(await call(daemon, "probe_echo", [1, 2]), -32602);
    assertErrorKeys(await call(daemon, "probe_crash"), -32099);
    assertErrorKeys(await call(daemon, "probe_rate"), -32003, ["retry_after_ms"]);
    assertErrorKeys(await call(daemon, "probe_unsendable"), -32603);
    assertErrorKeys(await call(daemon, "probe_big"), -32603);
    assertErrorKeys(await rawReply(daemon.host, ++id, "hooks/broken", {}), -32099);
    assertErrorKeys(await rawReply(daemon.host, ++id, "hooks/throws", {}), -32099);
    // The tool's own failure is a result, not an error.
    assert.deepEqual((await call(daemon, "probe_fail")).result, { error: "the calendar is full" });
  });

  test("work refused or abandoned by shutdown carries no data", async () => {
    const daemon = start({ env: { PROBE_DRAIN_MS: "300" } });
    await daemon.initialize();
    const hung = call(daemon, "probe_hang");
    const ack = rawReply(daemon.host, ++id, "shutdown", {});
    const refused = call(daemon, "probe_echo");
    assertErrorKeys(await refused, -32603);
    assertErrorKeys(await hung, -32603);
    assert.deepEqual((await ack).result, { ok: true });
  });
});
