/**
 * The plugin host's lifecycle with real child processes: the handshake (ok, another plugin's id,
 * no reply in time), the tool catalog rules in both directions, arguments validated before the
 * child is called, a crash in the middle of a call, restart and re-handshake, unusable frames,
 * and shutdown with its SIGKILL fallback.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { ConnectionClosedError, ToolArgumentInvalidError, ToolNotFoundError } from "@nexo/wire";
import {
  PluginCatalogError,
  PluginEnvError,
  PluginIdentityError,
  PluginInitTimeoutError,
  PluginUnavailableError,
} from "../../../src/extensions/plugins/errors.js";
import { invokePluginTool } from "../../../src/extensions/plugins/tool.js";
import { SandboxRequiredError, SandboxUnavailableError } from "../../../src/extensions/sandbox-errors.js";
import { baseEnv, cleanupHosts, makeHost, nextReady } from "../../fixtures/plugins/harness.js";
import { isGone } from "../../fixtures/processes.js";

afterEach(cleanupHosts);

interface Stats {
  invocations: Record<string, number>;
  env: Record<string, string>;
}

describe("plugin host: handshake", () => {
  it("starts the plugin, checks its identity and keeps its catalog", async () => {
    const { host, stateDir } = await makeHost("kitchen", {
      env: baseEnv({ ANTHROPIC_API_KEY: "sk-daemon-secret" }),
      fixtureEnv: { FIXTURE_GREETING: "hi" },
    });
    const session = await host.start();
    assert.equal(session.serverVersion, "kitchen-0.1.0");
    assert.equal(session.incarnation, 1);
    assert.ok(session.catalog.tools.has("kitchen_echo"));
    assert.deepEqual(session.catalog.missing, ["kitchen_unlisted"]);
    assert.match(session.warnings[0] ?? "", /kitchen_unlisted.*not advertised.*-33401/);

    const status = host.status();
    assert.equal(status.state, "running");
    assert.equal(status.restarts, 0);
    assert.equal(status.sandboxed, false);
    assert.equal(typeof status.pid, "number");

    const stats = (await invokePluginTool(host, "kitchen_stats", {})) as Stats;
    assert.equal(stats.env.NEXO_PLUGIN_ID, "kitchen");
    assert.equal(stats.env.NEXO_STATE_DIR, stateDir);
    assert.equal(stats.env.HOME, stateDir);
    assert.equal(stats.env.FIXTURE_GREETING, "hi");
    assert.equal(stats.env.ANTHROPIC_API_KEY, undefined, "the daemon's secrets never reach a plugin");
  });

  it("kills and refuses a child that answers as another plugin, without restarting it", async () => {
    const { host, groups } = await makeHost("kitchen", { fixtureEnv: { FIXTURE_ID: "slack" } });
    await assert.rejects(host.start(), (error: unknown) => {
      assert.ok(error instanceof PluginIdentityError);
      assert.equal(error.expected, "kitchen");
      assert.equal(error.got, "slack");
      assert.match(error.message, /identity mismatch/);
      return true;
    });
    assert.equal(host.state, "failed");
    assert.equal(host.status().lastError?.code, "plugin_identity_mismatch");
    assert.equal(host.status().restarts, 0, "a fatal handshake failure is not retried");
    assert.equal(groups.size, 0, "the child and its process group are gone");
    assert.equal(host.status().pid, undefined);
  });

  it("gives up when initialize is not answered within NEXO_PLUGIN_INIT_TIMEOUT_MS", async () => {
    const { host } = await makeHost("kitchen", {
      env: baseEnv({ NEXO_PLUGIN_INIT_TIMEOUT_MS: "300" }),
      fixtureEnv: { FIXTURE_INIT: "mute" },
      restart: { respawn: false },
    });
    const started = Date.now();
    await assert.rejects(host.start(), (error: unknown) => {
      assert.ok(error instanceof PluginInitTimeoutError);
      assert.equal(error.timeoutMs, 300);
      return true;
    });
    assert.ok(Date.now() - started < 3_000);
    assert.equal(host.state, "failed");
    assert.equal(host.status().lastError?.code, "plugin_init_timeout");
  });

  it("refuses a catalog that advertises a tool the manifest does not declare", async () => {
    const { host } = await makeHost("kitchen", { fixtureEnv: { FIXTURE_ADVERTISE_EXTRA: "1" } });
    await assert.rejects(host.start(), (error: unknown) => {
      assert.ok(error instanceof PluginCatalogError);
      assert.match(error.problems.join(), /"kitchen_extra" is advertised but not declared/);
      return true;
    });
    assert.equal(host.state, "failed");
  });

  it("refuses at the handshake a tool schema whose structure is broken, naming the tool and the keyword", async () => {
    const { host } = await makeHost("kitchen", { fixtureEnv: { FIXTURE_SCHEMA: "bad-type" } });
    await assert.rejects(host.start(), (error: unknown) => {
      assert.ok(error instanceof PluginCatalogError);
      assert.match(
        error.problems.join(),
        /tool "kitchen_echo" has an input_schema that cannot be compiled: schema is invalid: \/properties\/text\/type must be one of array, boolean, integer, null, number, object, string/,
      );
      return true;
    });
    assert.equal(host.state, "failed");
  });

  it("refuses every call to a tool whose schema only ajv can refuse (from its first call), without reaching the plugin", async () => {
    const { host } = await makeHost("kitchen", { fixtureEnv: { FIXTURE_SCHEMA: "dangling-ref" } });
    await host.start();
    for (let call = 0; call < 2; call++) {
      await assert.rejects(invokePluginTool(host, "kitchen_echo", { text: "hi" }), (error: unknown) => {
        assert.ok(error instanceof ToolArgumentInvalidError);
        assert.match(
          error.message,
          /kitchen_echo: \(arguments\) cannot be checked: the tool's input schema is invalid \(can't resolve reference #\/definitions\/nowhere/,
        );
        return true;
      });
    }
    // The other tools' schemas are fine and their calls go through.
    const stats = (await invokePluginTool(host, "kitchen_stats", {})) as {
      invocations: Record<string, number>;
    };
    assert.equal(stats.invocations.kitchen_echo, undefined);
  });

  it("refuses to start without the sandbox under NEXO_PLUGIN_SANDBOX_REQUIRE=1", async () => {
    const { host } = await makeHost("kitchen", { env: baseEnv({ NEXO_PLUGIN_SANDBOX_REQUIRE: "1" }) });
    let spawned = false;
    host.on("state", () => {
      spawned = true;
    });
    await assert.rejects(host.start(), SandboxRequiredError);
    assert.equal(spawned, false);
    assert.equal(host.state, "failed");
    assert.equal(host.status().lastError?.code, "sandbox_required");
  });

  it("rejects an unusable timeout override up front, naming the variable", async () => {
    await assert.rejects(
      makeHost("kitchen", { env: baseEnv({ NEXO_PLUGIN_TOOL_TIMEOUT_MS: "soon" }) }),
      (error: unknown) => error instanceof PluginEnvError && error.variable === "NEXO_PLUGIN_TOOL_TIMEOUT_MS",
    );
  });
});

describe("plugin host: calls", () => {
  it("answers -33401 for a declared tool the plugin does not advertise, without calling it", async () => {
    const { host } = await makeHost("kitchen");
    await host.start();
    await assert.rejects(invokePluginTool(host, "kitchen_unlisted", {}), (error: unknown) => {
      assert.ok(error instanceof ToolNotFoundError);
      assert.equal(error.code, -33401);
      assert.match(error.message, /declared.*does not advertise/);
      return true;
    });
    await assert.rejects(invokePluginTool(host, "kitchen_nothing", {}), ToolNotFoundError);
    const stats = (await invokePluginTool(host, "kitchen_stats", {})) as Stats;
    assert.deepEqual(Object.keys(stats.invocations), ["kitchen_stats"]);
  });

  it("validates arguments against the advertised schema before the child sees them", async () => {
    const { host } = await makeHost("kitchen");
    await host.start();
    await assert.rejects(
      invokePluginTool(host, "kitchen_echo", { text: 5, extra: true }),
      (error: unknown) => {
        assert.ok(error instanceof ToolArgumentInvalidError);
        assert.equal(error.code, -33402);
        assert.deepEqual(error.data, { details: [{ path: "/text", message: "must be string" }] });
        return true;
      },
    );
    await assert.rejects(invokePluginTool(host, "kitchen_echo", {}), (error: unknown) => {
      assert.ok(error instanceof ToolArgumentInvalidError);
      assert.deepEqual(error.details, [{ path: "/text", message: "is required" }]);
      return true;
    });
    const stats = (await invokePluginTool(host, "kitchen_stats", {})) as Stats;
    assert.equal(stats.invocations.kitchen_echo, undefined, "the child was never called");
    const ok = await invokePluginTool(host, "kitchen_echo", { text: "hey" }, { agentId: "ana" });
    assert.deepEqual(ok, {
      content: [{ type: "text", text: "echo: hey (agent ana, plugin kitchen)" }],
      is_error: false,
    });
  });

  it("fails calls at once with PluginUnavailableError when no child is running", async () => {
    const { host } = await makeHost("kitchen");
    await assert.rejects(invokePluginTool(host, "kitchen_echo", { text: "x" }), PluginUnavailableError);
    await assert.rejects(host.request("tool.invoke", {}, { timeoutMs: 100 }), PluginUnavailableError);
  });

  it("fails every call in flight at once when the child crashes, then restarts and handshakes again", async () => {
    const { host } = await makeHost("kitchen");
    await host.start();
    const firstPid = host.status().pid!;
    const slow = invokePluginTool(host, "kitchen_slow", { ms: 20_000 });
    const started = Date.now();
    const ready = nextReady(host);
    await assert.rejects(invokePluginTool(host, "kitchen_crash", {}), ConnectionClosedError);
    await assert.rejects(slow, ConnectionClosedError);
    assert.ok(Date.now() - started < 2_000, "in-flight calls do not wait for their timeout");

    assert.equal(await ready, 2);
    assert.equal(host.status().restarts, 1);
    assert.equal(host.status().lastError?.code, "plugin_crashed");
    assert.notEqual(host.status().pid, firstPid);
    assert.ok(isGone(firstPid));
    const again = await invokePluginTool(host, "kitchen_echo", { text: "back" });
    assert.match(JSON.stringify(again), /echo: back/);
  });

  it("survives unusable frames from the child and counts them", async () => {
    const { host } = await makeHost("kitchen");
    await host.start();
    const result = await invokePluginTool(host, "kitchen_noise", {});
    assert.match(JSON.stringify(result), /still here/);
    const problems = host.status().protocolProblems;
    assert.equal(problems.parse_error, 1);
    assert.equal(problems.invalid_request, 1);
    assert.equal(problems.unknown_response_id, 1);
    assert.equal(problems.oversize, 1);
    assert.equal(host.state, "running");
  });
});

describe("plugin host: sandbox", () => {
  it("spawns a sandboxed plugin under bubblewrap as nobody, with its state dir writable", async () => {
    const { host, stateDir } = await makeHost("boxed");
    await host.start();
    assert.equal(host.status().sandboxed, true);
    const probe = (await invokePluginTool(host, "boxed_probe", {
      hostPath: fileURLToPath(import.meta.url),
    })) as {
      uid: number;
      wrote: string;
      hostPathVisible: boolean;
    };
    assert.equal(probe.uid, 65534);
    assert.equal(probe.hostPathVisible, false);
    assert.equal(readFileSync(join(stateDir, "written-inside"), "utf8"), "hello");
  });

  it("refuses to run a sandboxed plugin unsandboxed when bwrap is missing", async () => {
    const { host } = await makeHost("boxed", { findBwrap: () => undefined });
    await assert.rejects(host.start(), SandboxUnavailableError);
    assert.equal(host.status().lastError?.code, "sandbox_unavailable");
  });
});

describe("plugin host: shutdown", () => {
  it("sends shutdown and lets a well-behaved child exit on its own", async () => {
    // A 20 s grace: stop() returning well within it shows it waited for the exit, not the grace.
    const { host, logs } = await makeHost("kitchen", { exitGraceMs: 20_000 });
    await host.start();
    const pid = host.status().pid!;
    const started = Date.now();
    await host.stop();
    assert.ok(Date.now() - started < 10_000, "no SIGKILL grace was needed");
    assert.ok(isGone(pid));
    assert.equal(host.state, "stopped");
    assert.ok(!logs.some((entry) => entry.message?.includes("SIGKILL")));
  });

  it("SIGKILLs the whole group 1 s after the acknowledgement when the child lingers", async () => {
    const { host, logs } = await makeHost("kitchen", { fixtureEnv: { FIXTURE_SHUTDOWN: "linger" } });
    await host.start();
    const pid = host.status().pid!;
    const started = Date.now();
    await host.stop();
    const took = Date.now() - started;
    assert.ok(took >= 950 && took < 3_000, `stop took ${took} ms`);
    assert.ok(isGone(pid));
    assert.ok(logs.some((entry) => entry.level === "warn" && entry.message?.includes("SIGKILL")));
  });

  it("bounds the wait for an acknowledgement that never comes", async () => {
    const { host } = await makeHost("kitchen", {
      fixtureEnv: { FIXTURE_SHUTDOWN: "hang" },
      shutdownTimeoutMs: 300,
    });
    await host.start();
    const pid = host.status().pid!;
    const started = Date.now();
    await host.stop();
    assert.ok(Date.now() - started < 3_000);
    assert.ok(isGone(pid));
    assert.equal(host.status().lastError?.code, "plugin_shutdown_timeout");
  });

  it("surfaces a shutdown handler's error to the operator", async () => {
    const { host } = await makeHost("kitchen", { fixtureEnv: { FIXTURE_SHUTDOWN: "error" } });
    await host.start();
    await host.stop();
    assert.equal(host.status().lastError?.code, "plugin_shutdown_failed");
    assert.match(host.status().lastError?.message ?? "", /-32000: could not flush/);
  });
});
