/**
 * The hook wrapper against a real plugin process: hook points mapped, replies turned into votes,
 * and continue-on-error for every kind of failure.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { HookRunner } from "../../../src/engine/hooks.js";
import {
  PluginHookHandler,
  registerPluginHooks,
  unknownHookNames,
} from "../../../src/extensions/plugins/hook.js";
import { cleanupHosts, startHost as started } from "../../fixtures/plugins/harness.js";
import { recordingLogger } from "../../fixtures/processes.js";

afterEach(cleanupHosts);

describe("hook wrapper", () => {
  const ctx = { agentId: "ana", sessionId: "s1" };

  it("registers the mapped hook points and turns replies into votes", async () => {
    const { host, logs } = await started();
    const runner = new HookRunner();
    registerPluginHooks(host, runner, recordingLogger());
    assert.ok(runner.has("before_message") && runner.has("after_tool"));
    assert.ok(!runner.has("before_reply"));

    assert.deepEqual(await runner.run("before_message", { text: "hello" }, ctx), {
      decision: "continue",
      payload: { text: "hello" },
    });
    const redacted = await runner.run("before_message", { text: "my secret plan" }, ctx);
    assert.deepEqual(redacted.payload, { text: "my [REDACTED] plan" });
    const blocked = await runner.run("before_message", { text: "please block this" }, ctx);
    assert.equal(blocked.decision, "block");
    assert.equal(blocked.reason, "blocked at before_message");
    const overridden = await runner.run(
      "after_tool",
      { tool: "x", args: {}, output: "please override", status: "success" },
      ctx,
    );
    assert.deepEqual(overridden.payload, { tool: "x", args: {}, output: "overridden", status: "error" });
    assert.equal(logs.filter((e) => e.level === "error").length, 0);
  });

  it("continues with a warning on an error reply, a malformed reply, a timeout or a stopped plugin", async () => {
    const { host } = await started({ NEXO_PLUGIN_HOOK_TIMEOUT_MS: "300" });
    const logger = recordingLogger();
    const handler = new PluginHookHandler(host, "before_message", logger);
    for (const text of ["explode", "garbage", "slow"]) {
      assert.deepEqual(await handler.onHook("before_message", { text }, ctx), { decision: "continue" });
    }
    await host.stop();
    assert.deepEqual(await handler.onHook("before_message", { text: "block" }, ctx), {
      decision: "continue",
    });
    const warnings = logger.entries.filter((e) => e.level === "warn").map((e) => String(e.fields.err));
    assert.equal(warnings.length, 4);
    assert.match(warnings[0]!, /hook crashed/);
    assert.match(warnings[1]!, /malformed hook.on_hook reply/);
    assert.match(warnings[2]!, /timed out after 300 ms/);
    assert.match(warnings[3]!, /not running/);
  });

  it("treats -32601 (hook.on_hook not implemented) as continue", async () => {
    const { host } = await started({}, { FIXTURE_UNIMPLEMENTED: "hook.on_hook" });
    const logger = recordingLogger();
    const handler = new PluginHookHandler(host, "before_message", logger);
    assert.deepEqual(await handler.onHook("before_message", { text: "block" }, ctx), {
      decision: "continue",
    });
    assert.match(String(logger.entries[0]?.fields.err), /method not found/);
  });

  it("lets the next handler run after a failing plugin hook", async () => {
    const { host } = await started();
    const runner = new HookRunner();
    runner.register(new PluginHookHandler(host, "before_message", recordingLogger()));
    runner.register({
      name: "second",
      points: ["before_message"],
      onHook: async (_point, payload) => ({ decision: "transform", payload: { text: `${payload.text}!` } }),
    });
    const outcome = await runner.run("before_message", { text: "explode" }, ctx);
    assert.deepEqual(outcome.payload, { text: "explode!" });
  });

  it("reports hook names that are no hook point", () => {
    assert.deepEqual(unknownHookNames(["before_message", "pii_redact", "before_tool_call"]), ["pii_redact"]);
  });
});
