/**
 * A microapp built with the SDK, run as a real child process and driven by a scripted daemon over
 * its stdio: initialize, the tool catalogue, tools/call outcomes, hooks, notifications, the admin
 * client granted and denied, dispatch, the stdout guard and every way of stopping.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import {
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  MicroappInternalError,
  MicroappRateLimitedError,
  RpcError,
} from "@nexo/wire";
import { microapp } from "@nexo/wire/schemas";
import { BINDING, INBOUND, ScriptedDaemon, type ScriptedDaemonOptions } from "../helpers/scripted-daemon.js";

const daemons: ScriptedDaemon[] = [];
function start(options: ScriptedDaemonOptions = {}): ScriptedDaemon {
  const daemon = new ScriptedDaemon(options);
  daemons.push(daemon);
  return daemon;
}

afterEach(async () => {
  for (const daemon of daemons.splice(0)) await daemon.dispose();
});

async function started(options: ScriptedDaemonOptions = {}): Promise<ScriptedDaemon> {
  const daemon = start(options);
  await daemon.initialize();
  return daemon;
}

describe("initialize", () => {
  test("answers the catalogue, the version and the hooks; creates state_dir; runs onInitialize with the checked config", async () => {
    const daemon = start();
    const result = microapp.MicroappInitializeResultSchema.parse(await daemon.initialize());
    assert.equal(result.version, "0.3.0");
    assert.deepEqual(result.hooks, ["before_message", "broken", "throws"]);
    assert.deepEqual(
      result.tools.map((t) => t.name),
      [
        "probe_echo",
        "probe_nothing",
        "probe_fail",
        "probe_crash",
        "probe_rate",
        "probe_print",
        "probe_unsendable",
        "probe_big",
        "probe_hang",
        "probe_admin",
        "probe_agents",
        "probe_pause",
        "probe_dispatch",
        "probe_uncaught",
        "probe_events",
      ],
    );
    assert.deepEqual(result.tools[0], {
      name: "probe_echo",
      description: "Echoes its arguments with the binding and the initialize config",
      input_schema: { type: "object", properties: { text: { type: "string" } } },
    });
    assert.deepEqual(result.tools[1], { name: "probe_nothing", input_schema: { type: "object" } });
    const written = JSON.parse(readFileSync(join(daemon.stateDir, "initialized.json"), "utf8"));
    assert.deepEqual(written, {
      extensionId: "probe",
      stateDir: daemon.stateDir,
      config: { greeting: "hola" },
    });
  });

  test("tools/list answers the same bytes as initialize's tools, every time", async () => {
    const daemon = start();
    await daemon.initialize();
    await daemon.host.peer.request("tools/list", {});
    await daemon.host.peer.request("tools/list");
    const lines = daemon.host.stdoutLines.map((line) => JSON.parse(line) as { result?: { tools?: unknown } });
    const catalogues = lines.map((frame) => JSON.stringify(frame.result?.tools));
    assert.equal(catalogues.length, 3);
    assert.equal(new Set(catalogues).size, 1);
  });

  test("an extension id other than the microapp's is refused with a message naming both", async () => {
    const daemon = start({ extensionId: "probe2" });
    await assert.rejects(daemon.initialize(), (error: unknown) => {
      assert.ok(error instanceof InvalidParamsError);
      assert.match(error.message, /this microapp is "probe".*started it as "probe2"/);
      return true;
    });
  });

  test("a config that fails the microapp's schema is refused -32602 naming the field", async () => {
    const daemon = start();
    await assert.rejects(daemon.initialize({ config: { greeting: 42 } }), (error: unknown) => {
      assert.ok(error instanceof InvalidParamsError);
      assert.match(error.message, /invalid config for probe: greeting: /);
      return true;
    });
  });

  test("params breaking the schema get -32602; a second initialize is refused", async () => {
    const daemon = start();
    await assert.rejects(daemon.host.peer.request("initialize", { state_dir: "/tmp/x" }), InvalidParamsError);
    await daemon.initialize();
    await assert.rejects(daemon.initialize(), InvalidRequestError);
  });

  test("onInitialize throwing fails initialize with -32099 and its message, the stack on stderr", async () => {
    const daemon = start({ env: { PROBE_INIT_FAIL: "1" } });
    await assert.rejects(daemon.initialize(), (error: unknown) => {
      assert.ok(error instanceof MicroappInternalError);
      assert.match(error.message, /onInitialize failed: the database is locked/);
      return true;
    });
    await daemon.host.stderrMatch(/\[ERROR\] onInitialize failed: Error: the database is locked\n\s+at /);
  });
});

describe("tools/call", () => {
  test("a result is {output}: the args, the binding context and the inbound reach the handler", async () => {
    const daemon = await started();
    const result = await daemon.callTool("probe_echo", { text: "hi", extra: [1, 2] });
    assert.deepEqual(result, {
      output: {
        args: { text: "hi", extra: [1, 2] },
        binding: BINDING,
        inbound: INBOUND,
        greeting: "hola",
      },
    });
    assert.deepEqual(await daemon.callTool("probe_echo", {}, { inbound: undefined }), {
      output: {
        args: {},
        binding: BINDING,
        inbound: null,
        greeting: "hola",
      },
    });
    assert.deepEqual(await daemon.callTool("probe_nothing"), { output: null });
  });

  test("ToolFailure is the {error} result; a typed error keeps its code; a bug is -32099 with its stack on stderr", async () => {
    const daemon = await started();
    assert.deepEqual(await daemon.callTool("probe_fail"), { error: "the calendar is full" });
    await assert.rejects(daemon.callTool("probe_rate"), (error: unknown) => {
      assert.ok(error instanceof MicroappRateLimitedError);
      assert.equal(error.retryAfterMs, 1500);
      return true;
    });
    await assert.rejects(daemon.callTool("probe_crash"), (error: unknown) => {
      assert.ok(error instanceof MicroappInternalError);
      assert.equal(error.message, "tools/call probe_crash failed: cannot read properties of undefined");
      return true;
    });
    await daemon.host.stderrMatch(
      /\[ERROR\] tools\/call probe_crash failed: TypeError: cannot read properties/,
    );
  });

  test("an unknown tool, bad params or a call before initialize are protocol errors", async () => {
    const daemon = start();
    await assert.rejects(daemon.callTool("probe_echo"), InvalidRequestError);
    await daemon.initialize();
    await assert.rejects(daemon.callTool("probe_nope"), (error: unknown) => {
      assert.ok(error instanceof InvalidParamsError);
      assert.match(error.message, /unknown tool "probe_nope"; this microapp has: probe_echo, /);
      return true;
    });
    await assert.rejects(
      daemon.host.peer.request("tools/call", { tool: "probe_echo", args: [] }),
      InvalidParamsError,
    );
  });

  test("a result JSON cannot carry (NaN) gets an error reply instead of null or silence", async () => {
    const daemon = await started();
    await assert.rejects(daemon.callTool("probe_unsendable"), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.code, -32603);
      assert.match(error.message, /NaN/);
      return true;
    });
  });

  test("a result over the outgoing frame cap gets an error reply; the microapp keeps serving", async () => {
    const daemon = await started();
    await assert.rejects(daemon.callTool("probe_big"), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.code, -32603);
      assert.match(error.message, /exceeds the 1048576-byte limit/);
      return true;
    });
    assert.deepEqual(await daemon.callTool("probe_nothing"), { output: null });
  });

  test("an unknown daemon method is answered -32601", async () => {
    const daemon = await started();
    await assert.rejects(daemon.host.peer.request("tools/describe", {}), MethodNotFoundError);
  });
});

describe("the stdout guard", () => {
  test("console.log, a forged frame and a partial line go to stderr; stdout carries only the protocol", async () => {
    const daemon = await started();
    assert.deepEqual(await daemon.callTool("probe_print"), { output: { printed: true } });
    await daemon.host.stderrMatch(/\[stdout-guard\] a stray console\.log/);
    await daemon.host.stderrMatch(/\[stdout-guard\] \{"jsonrpc":"2\.0","id":1,"result":\{"forged":true\}\}/);
    assert.deepEqual(await daemon.shutdown(), { ok: true });
    await daemon.host.waitExit();
    assert.match(daemon.host.stderr, /\[stdout-guard\] a partial line without newline/);
    daemon.host.assertFramesIntact();
    assert.ok(!daemon.host.stdoutLines.some((line) => line.includes("forged")));
  });
});

describe("hooks", () => {
  test("allow, deny with reason and metadata, and abstain when the handler returns nothing", async () => {
    const daemon = await started();
    assert.deepEqual(await daemon.hook("before_message", { text: "hello there" }), { vote: "allow" });
    assert.deepEqual(await daemon.hook("before_message", { text: "a forbidden thing" }), {
      vote: "deny",
      reason: "forbidden word",
      metadata: { word: "forbidden" },
    });
    assert.deepEqual(await daemon.hook("before_message", { text: "whatever" }), { vote: "abstain" });
  });

  test("an invalid vote or a throwing hook is -32099; an unregistered hook is -32601 (abstain)", async () => {
    const daemon = await started();
    await assert.rejects(daemon.hook("broken", {}), (error: unknown) => {
      assert.ok(error instanceof MicroappInternalError);
      assert.match(error.message, /hook broken returned an invalid decision: vote: /);
      return true;
    });
    await assert.rejects(daemon.hook("throws", {}), /hooks\/throws failed: hook exploded/);
    await assert.rejects(daemon.hook("after_message", {}), MethodNotFoundError);
  });
});

describe("notifications", () => {
  test("each reaches its listener with checked params; params breaking the schema are dropped", async () => {
    const daemon = await started();
    const transcript = {
      kind: "transcript_appended",
      agent_id: "ana",
      session_id: "s-1",
      seq: 3,
      role: "user",
      body: "hola",
      sent_at_ms: 1_735_689_600_000,
      source_plugin: "whatsapp",
    };
    await daemon.notify("agents/updated", { agent_ids: ["ana", "carlos"] });
    await daemon.notify("agents/updated", { agent_ids: "ana" });
    await daemon.notify("nexo/notify/agent_event", transcript);
    await daemon.notify("nexo/notify/transcript_appended", {
      session_id: "s-1",
      role: "user",
      body: "hola",
      ts_ms: 1,
    });
    await daemon.notify("nexo/notify/pairing_status_changed", {
      challenge_id: "c-1",
      state: "qr_ready",
      data: { qr_ascii: "##" },
    });
    await daemon.notify("nexo/notify/token_rotated", {
      old_hash: "0123456789abcdef",
      new: "fedcba9876543210",
    });
    await daemon.notify("nexo/notify/something_new", { x: 1 });
    const received = (await daemon.callTool("probe_events")) as {
      output: Array<{ method: string; params: unknown }>;
    };
    assert.deepEqual(
      received.output.map((event) => event.method),
      [
        "agents/updated",
        "nexo/notify/agent_event",
        "nexo/notify/transcript_appended",
        "nexo/notify/pairing_status_changed",
        "nexo/notify/token_rotated",
      ],
    );
    assert.deepEqual(received.output[0]!.params, { agent_ids: ["ana", "carlos"] });
    assert.deepEqual(received.output[1]!.params, transcript);
    assert.ok(daemon.host.problems.length === 0, "the microapp side reports no problem to the daemon");
  });
});

describe("admin calls", () => {
  test("granted: the typed client's call reaches the daemon with an app:<uuid v7> id and its reply is typed", async () => {
    const daemon = await started({ grants: ["agents_crud"] });
    daemon.serve("nexo/admin/agents/list", (params) => ({
      agents: [
        { id: "ana", active: true, model_provider: "scripted", bindings_count: 1 },
        { id: "carlos", active: params?.active_only !== true, model_provider: "scripted", bindings_count: 0 },
      ],
    }));
    assert.deepEqual(await daemon.callTool("probe_agents"), { output: { ids: ["ana", "carlos"] } });
    const [call] = daemon.calls;
    assert.equal(call?.method, "nexo/admin/agents/list");
    assert.deepEqual(call?.params, { active_only: true });
    assert.match(
      String(call?.id),
      /^app:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  test("denied: CapabilityNotGrantedError with capability, method and microapp id", async () => {
    const daemon = await started({ grants: [] });
    assert.deepEqual(await daemon.callTool("probe_agents"), {
      output: {
        failed: {
          kind: "CapabilityNotGranted",
          capability: "agents_crud",
          method: "nexo/admin/agents/list",
          microappId: "probe",
        },
      },
    });
    assert.deepEqual(
      daemon.calls.map((c) => [c.method, c.outcome]),
      [["nexo/admin/agents/list", "denied"]],
    );
  });

  test("a failed call a tool does not catch is the tool's {error}, never the daemon's code on the reply", async () => {
    const daemon = await started({ grants: [] });
    assert.deepEqual(await daemon.callTool("probe_uncaught"), {
      error: "nexo/admin/agents/list refused: the operator has not granted the capability agents_crud",
    });
    daemon.grant("agents_crud");
    daemon.serve("nexo/admin/agents/list", () => ({ agents: "broken" }) as never);
    const malformed = (await daemon.callTool("probe_uncaught")) as { error: string };
    assert.match(
      malformed.error,
      /^nexo\/admin\/agents\/list failed: malformed nexo\/admin\/agents\/list reply: agents: /,
    );
  });

  test("by name: any method of the table; the daemon's -32602 and a malformed reply are typed errors", async () => {
    const daemon = await started({ grants: ["skills_crud", "tenants_crud"] });
    daemon.serve("nexo/admin/skills/get", (params) => ({
      skill: { name: params.name, body: "be brief", updated_at: "2026-05-04T00:00:00Z" },
    }));
    daemon.serve("nexo/admin/tenants/list", () => ({ tenants: "not a list" }) as never);
    const got = (await daemon.callTool("probe_admin", {
      method: "skills/get",
      params: { name: "brief" },
    })) as {
      output: { ok: { skill: { body: string } } };
    };
    assert.equal(got.output.ok.skill.body, "be brief");
    assert.deepEqual(await daemon.callTool("probe_admin", { method: "skills/get", params: {} }), {
      output: {
        failed: {
          kind: "InvalidParamsError",
          code: -32602,
          message:
            "invalid nexo/admin/skills/get params: name: Invalid input: expected string, received undefined",
        },
      },
    });
    const malformed = (await daemon.callTool("probe_admin", { method: "tenants/list" })) as {
      output: { failed: { kind: string; message: string } };
    };
    assert.equal(malformed.output.failed.kind, "MalformedReplyError");
    assert.match(malformed.output.failed.message, /malformed nexo\/admin\/tenants\/list reply: tenants: /);
    assert.deepEqual(await daemon.callTool("probe_admin", { method: "no/such" }), {
      output: { failed: { kind: "TypeError", message: "unknown admin method: no/such" } },
    });
  });

  test("operator_token_hash: the stamping source's value replaces the caller's; without one the call fails before sending", async () => {
    const daemon = await started({ grants: ["operator_intervention"] });
    daemon.serve("nexo/admin/processing/pause", () => ({ changed: true, correlation_id: "c-9" }));
    const scope = {
      kind: "conversation",
      agent_id: "ana",
      channel: "whatsapp",
      account_id: "acme",
      contact_id: "+57",
    };
    assert.deepEqual(await daemon.callTool("probe_pause", { scope, hash: "0123456789abcdef" }), {
      output: { ok: { changed: true, correlation_id: "c-9" } },
    });
    assert.deepEqual(daemon.calls[0]?.params, {
      scope,
      reason: "takeover",
      operator_token_hash: "0123456789abcdef",
    });
    const unstamped = (await daemon.callTool("probe_pause", { scope })) as {
      output: { failed: { message: string } };
    };
    assert.match(
      unstamped.output.failed.message,
      /needs operator_token_hash: pass it, or set admin\.setOperatorTokenHash/,
    );
    assert.equal(daemon.calls.length, 1, "nothing was sent without a hash");
  });

  test("nexo/dispatch: granted it answers {msg_id}, denied it is CapabilityNotGranted dispatch_outbound", async () => {
    const daemon = await started({ grants: [] });
    daemon.serve("nexo/dispatch", (params) => ({ msg_id: `m-${params.to}` }));
    assert.deepEqual(await daemon.callTool("probe_dispatch", { to: "u1", body: "hi" }), {
      output: {
        failed: {
          kind: "CapabilityNotGranted",
          capability: "dispatch_outbound",
          method: "nexo/dispatch",
          microappId: "probe",
        },
      },
    });
    daemon.grant("dispatch_outbound");
    assert.deepEqual(await daemon.callTool("probe_dispatch", { to: "u1", body: "hi" }), {
      output: { ok: { msg_id: "m-u1" } },
    });
    assert.deepEqual(daemon.calls[1]?.params, { channel: "loopback", to: "u1", body: "hi" });
  });
});

describe("stopping", () => {
  test("shutdown: {ok:true}, onShutdown ran, the process exits 0 although a timer would keep it alive", async () => {
    const daemon = await started({ env: { PROBE_KEEP_ALIVE: "1" } });
    const began = Date.now();
    assert.deepEqual(await daemon.shutdown(), { ok: true });
    const acked = Date.now() - began;
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
    assert.ok(acked < 5_000, `shutdown answered after ${acked} ms`);
    assert.match(daemon.host.stderr, /\[INFO\] probe: onShutdown ran/);
    daemon.host.assertFramesIntact();
  });

  test("a hung tool is abandoned at the drain bound: its error reply, then the ack, then exit", async () => {
    const daemon = await started({ env: { PROBE_DRAIN_MS: "300" } });
    const hung = daemon.callTool("probe_hang");
    const abandoned = assert.rejects(
      hung,
      /abandoned: the microapp shut down before this call finished \(drain bound 300 ms\)/,
    );
    assert.deepEqual(await daemon.shutdown(), { ok: true });
    await abandoned;
    await daemon.host.stderrMatch(
      /\[WARN\] shutdown requested: abandoned 1 handler\(s\) still running after 300 ms/,
    );
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
  });

  test("an onShutdown that never settles does not hold the ack past the bound", async () => {
    const daemon = await started({ env: { PROBE_DRAIN_MS: "300", PROBE_SHUTDOWN_HANG: "1" } });
    assert.deepEqual(await daemon.shutdown(), { ok: true });
    await daemon.host.stderrMatch(/\[WARN\] onShutdown did not finish within 300 ms/);
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
  });

  test("a shutdown right behind initialize still lets initialize's answer out first", async () => {
    const daemon = start();
    const init = daemon.initialize();
    const ack = daemon.shutdown();
    assert.equal(microapp.MicroappInitializeResultSchema.parse(await init).version, "0.3.0");
    assert.deepEqual(await ack, { ok: true });
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
  });

  test("work arriving after shutdown began is refused", async () => {
    const daemon = await started({ env: { PROBE_DRAIN_MS: "500" } });
    const hung = daemon.callTool("probe_hang").catch(() => undefined);
    const ack = daemon.shutdown();
    await assert.rejects(daemon.callTool("probe_echo"), /the microapp is shutting down; tools\/call refused/);
    assert.deepEqual(await ack, { ok: true });
    await hung;
  });

  test("stdin EOF stops the microapp: in-flight handlers see their signal aborted, the process exits 0", async () => {
    const daemon = await started({ env: { PROBE_KEEP_ALIVE: "1" } });
    daemon.host.child.stdin.end();
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
    assert.ok(existsSync(join(daemon.stateDir, "initialized.json")));
  });

  test("SIGTERM drains and exits 0", async () => {
    const daemon = await started({ env: { PROBE_KEEP_ALIVE: "1" } });
    daemon.host.child.kill("SIGTERM");
    assert.deepEqual(await daemon.host.waitExit(), { code: 0, signal: null });
    assert.match(daemon.host.stderr, /\[WARN\] received SIGTERM: draining in-flight work, then stopping/);
  });
});
