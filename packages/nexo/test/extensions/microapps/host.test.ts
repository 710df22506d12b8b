/**
 * The microapp host with real child processes (a Node probe and a stdlib Python microapp): the
 * initialize handshake and its tool-name rule, tools/call with {output} and {error}, a timeout
 * that keeps the process, a crash and the restart, unusable frames, and the shutdown deadlines.
 */
import assert from "node:assert/strict";
import { Socket } from "node:net";
import { afterEach, describe, it } from "node:test";
import { MalformedReplyError, TimeoutError } from "@nexo/wire";
import {
  MicroappInitTimeoutError,
  MicroappUnavailableError,
} from "../../../src/extensions/microapps/errors.js";
import { cleanupMicroapps, makeMicroapp, nextReady } from "../../fixtures/microapps/harness.js";
import { isGone } from "../../fixtures/processes.js";

afterEach(cleanupMicroapps);

const binding = {
  agent_id: "ana",
  channel: "whatsapp",
  account_id: "acme",
  binding_id: "whatsapp:acme",
  binding_index: 0,
};

describe("microapp host: initialize and tools", () => {
  it("starts the microapp with {extension_id, state_dir, config} and keeps its catalogue and hooks", async () => {
    const { host } = await makeMicroapp("probe", { config: { hooks: ["before_message", "on_the_moon"] } });
    const session = await host.start();
    assert.equal(session.version, "0.1.0");
    assert.ok(session.catalog.tools.has("probe_echo"));
    assert.deepEqual(session.catalog.rejected, []);
    assert.deepEqual(session.hooks.names, ["before_message"]);
    assert.match(session.hooks.ignored[0] ?? "", /"on_the_moon" is not a hook point nexo fires/);
    const status = host.status();
    assert.equal(status.state, "running");
    assert.equal(status.pid, session.pid);
    assert.ok(status.stderrTail.includes("[INFO] probe started"));
  });

  it("rejects an unprefixed tool, naming it, and offers the others", async () => {
    const { host, logs } = await makeMicroapp("probe", {
      config: { extra_tools: ["send_message", "probe-x_y"] },
    });
    const session = await host.start();
    assert.ok(!session.catalog.tools.has("send_message"));
    assert.ok(!session.catalog.tools.has("probe-x_y"));
    assert.ok(session.catalog.tools.has("probe_echo"));
    assert.match(session.catalog.rejected[0] ?? "", /tool "send_message" is not prefixed "probe_"/);
    assert.match(session.catalog.rejected[1] ?? "", /tool "probe-x_y" is not prefixed "probe_"/);
    assert.ok(logs.some((entry) => entry.level === "error" && /send_message/.test(entry.message ?? "")));
  });

  it("tools/call carries the binding; {output} and {error} come back as the microapp sent them", async () => {
    const { host } = await makeMicroapp("probe");
    await host.start();
    const inbound = {
      kind: "whatsapp_message",
      from: "+573000000000",
      ts_ms: 1735689600000,
      session_id: "s1",
    };
    const echoed = await host.callTool({
      tool: "probe_echo",
      args: { text: "hi" },
      binding_context: binding,
      inbound,
    });
    assert.deepEqual(echoed, { output: { args: { text: "hi" }, binding_context: binding, inbound } });
    assert.deepEqual(await host.callTool({ tool: "probe_fail", args: {}, binding_context: binding }), {
      error: "it failed on purpose",
    });
  });

  it("a tools/call reply breaking the contract is MalformedReplyError; a good one comes back as sent", async () => {
    const { host } = await makeMicroapp("probe");
    await host.start();
    const reply = (result: unknown) =>
      host.callTool({ tool: "probe_reply", args: { result }, binding_context: binding });
    assert.deepEqual(await reply({ output: { a: [1, null] }, note: "kept" }), {
      output: { a: [1, null] },
      note: "kept",
    });
    assert.deepEqual(await reply({ error: "no" }), { error: "no" });
    assert.deepEqual(await reply({ output: null }), { output: null });
    for (const bad of [{ output: 1, error: "both" }, {}, { error: 5 }, [{ output: 1 }], "text", null]) {
      await assert.rejects(
        reply(bad),
        (error: unknown) => error instanceof MalformedReplyError && /tools\/call/.test(error.message),
        JSON.stringify(bad),
      );
    }
  });

  it("tools/calls issued in one tick leave together (coalesced, as the plugin host's)", async () => {
    const { host } = await makeMicroapp("probe");
    await host.start();
    await host.callTool({ tool: "probe_pid", args: {}, binding_context: binding });
    // The pipes to children are net.Sockets: a corked batch reaches the stream as one _writev.
    const socket = Socket.prototype as unknown as { _writev: (...args: unknown[]) => unknown };
    const writev = socket._writev;
    let batches = 0;
    socket._writev = function (this: unknown, ...args: unknown[]) {
      batches++;
      return writev.apply(this, args);
    };
    try {
      const calls = [1, 2, 3].map((n) =>
        host.callTool({ tool: "probe_echo", args: { n }, binding_context: binding }),
      );
      const replies = await Promise.all(calls);
      assert.deepEqual(
        replies.map((reply) => (reply.output as { args: unknown }).args),
        [{ n: 1 }, { n: 2 }, { n: 3 }],
      );
    } finally {
      socket._writev = writev;
    }
    // The first request leaves at once (the tick before sent one frame), the other two in one write.
    assert.equal(batches, 1);
  });

  it("a timeout fails the call and keeps the process: the same pid answers afterwards", async () => {
    // timeout_secs bounds initialize too: 5 s leaves a loaded machine room to start the probe.
    const { host } = await makeMicroapp("probe", { timeout_secs: 5 });
    const session = await host.start();
    await assert.rejects(
      host.callTool({ tool: "probe_slow", args: { ms: 20_000 }, binding_context: binding }),
      (error: unknown) => error instanceof TimeoutError && error.timeoutMs === 5000,
    );
    const pid = await host.callTool({ tool: "probe_pid", args: {}, binding_context: binding });
    assert.deepEqual(pid, { output: session.pid });
    assert.equal(host.status().restarts, 0);
  });

  it("initialize not answered within timeout_secs is a typed failure", async () => {
    const { host } = await makeMicroapp(
      "probe",
      { timeout_secs: 0.3, config: { init: "mute" } },
      { restart: { respawn: false } },
    );
    await assert.rejects(host.start(), MicroappInitTimeoutError);
    assert.equal(host.state, "failed");
  });
});

describe("microapp host: crashes and bad frames", () => {
  it("a crash fails the call in flight, then the microapp is restarted and answers again", async () => {
    const { host } = await makeMicroapp("probe");
    const first = await host.start();
    const ready = nextReady(host);
    await assert.rejects(host.callTool({ tool: "probe_crash", args: {}, binding_context: binding }));
    assert.equal(await ready, 2);
    const second = host.session!;
    assert.notEqual(second.pid, first.pid);
    assert.ok(isGone(first.pid));
    assert.deepEqual(await host.callTool({ tool: "probe_pid", args: {}, binding_context: binding }), {
      output: second.pid,
    });
    assert.equal(host.status().restarts, 1);
    assert.equal(host.status().lastError?.code, "microapp_crashed");
  });

  it("garbage, an oversize line and a request without an app: id neither crash the host nor run anything", async () => {
    const { host } = await makeMicroapp("probe");
    const session = await host.start();
    const reply = await host.callTool({
      tool: "probe_raw",
      args: {
        lines: ["this is not json {", "[1,2,3]", '"a string"'],
        oversize_bytes: (1 << 20) + 100,
        // Nobody serves the admin RPC on this host: the request is answered -32601, never run.
        then_call: { id: 7, method: "nexo/admin/microapp_audit/tail", params: {} },
      },
      binding_context: binding,
    });
    assert.equal((reply.output as { error?: { code: number } }).error?.code, -32601);
    const problems = host.status().protocolProblems;
    assert.equal(problems.parse_error, 1);
    assert.equal(problems.oversize, 1);
    assert.equal(problems.invalid_request, 2);
    assert.deepEqual(await host.callTool({ tool: "probe_pid", args: {}, binding_context: binding }), {
      output: session.pid,
    });
  });

  it("calls while nothing runs fail at once with MicroappUnavailableError", async () => {
    const { host } = await makeMicroapp("probe");
    assert.throws(() => host.notify("agents/updated", { agent_ids: [] }), MicroappUnavailableError);
    // A rejection, not a throw: the tool wrapper maps it like any failed call.
    const call = host.callTool({ tool: "probe_pid", args: {}, binding_context: binding });
    await assert.rejects(call, MicroappUnavailableError);
    await assert.rejects(async () => host.refreshTools(), MicroappUnavailableError);
  });
});

describe("microapp host: shutdown", () => {
  it("shutdown is answered {ok:true}; the process exits and nothing is left", async () => {
    const { host } = await makeMicroapp("probe");
    const { pid } = await host.start();
    await host.stop("test");
    assert.equal(host.state, "stopped");
    assert.deepEqual(host.status().lastExit, { code: 0, signal: null, requested: true });
    assert.equal(host.status().lastError, undefined);
    assert.ok(isGone(pid));
  });

  it("a microapp that never answers shutdown and ignores SIGTERM is SIGKILLed by 10 s, and no process remains", async () => {
    const { host, groups } = await makeMicroapp("probe", { config: { shutdown: "ignore" } });
    const { pid } = await host.start();
    const started = Date.now();
    await host.stop("test");
    const took = Date.now() - started;
    assert.deepEqual(host.status().lastExit, { code: null, signal: "SIGKILL", requested: true });
    assert.equal(host.status().lastError?.code, "microapp_shutdown_timeout");
    assert.ok(took >= 9_500, `killed after ${took} ms: the 10 s deadline was not honoured`);
    assert.ok(took < 12_000, `killed after ${took} ms: later than the 10 s deadline`);
    assert.ok(isGone(pid));
    assert.equal(groups.size, 0);
  });
});

describe("microapp host: a Python microapp", () => {
  it("starts, answers a tool, survives a crash", async () => {
    const { host } = await makeMicroapp("py-hello");
    const first = await host.start();
    assert.deepEqual(
      [...first.catalog.tools.keys()],
      ["py_hello_greet", "py_hello_admin", "py_hello_crash", "py_hello_pid"],
    );
    assert.deepEqual(
      await host.callTool({ tool: "py_hello_greet", args: { name: "ana" }, binding_context: binding }),
      {
        output: { greeting: "hello, ana" },
      },
    );
    const ready = nextReady(host);
    await assert.rejects(host.callTool({ tool: "py_hello_crash", args: {}, binding_context: binding }));
    await ready;
    assert.deepEqual(await host.callTool({ tool: "py_hello_pid", args: {}, binding_context: binding }), {
      output: host.session!.pid,
    });
    assert.ok(host.status().stderrTail.includes("[ERROR] crashing on purpose"));
  });
});
