/**
 * `initialize`'s capability flags are true exactly where the families are served — enumerated for
 * the three ways an AppServer runs (plain `nexo app-server`, with `--config DIR`, and the daemon's
 * over WebSocket) — and every method of the protocol nexo does not serve answers -32601 with the
 * reason in `error.data.detail`.
 */
import assert from "node:assert/strict";
import { after, afterEach, describe, test } from "node:test";
import { ABSENT_METHODS } from "../../../../src/doors/appserver/families/unsupported.js";
import { AppServerProcess } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, daemonServer, LLM_YAML, managedServer } from "./management-helpers.js";

const processes: AppServerProcess[] = [];
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});
after(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const CORE = [
  "approvalFlow",
  "commandManagement",
  "configOverride",
  "modeSwitch",
  "subAgentSessions",
  "threadManagement",
  "threadSubscriptions",
];
const CONFIG = [
  "externalChannelManagement",
  "mcpManagement",
  "modelCatalogManagement",
  "pluginManagement",
  "skillsManagement",
  "subAgentManagement",
  "workspaceConfigManagement",
];
const LIVE = ["channelStatus", "mcpStatus"];

/** The boolean flags (each true); `extensions` is checked apart: every server serves welcome suggestions. */
function flagsOf(capabilities: Record<string, unknown>): string[] {
  const { extensions, ...flags } = capabilities;
  assert.deepEqual(extensions, { welcomeSuggestions: true });
  for (const [flag, value] of Object.entries(flags))
    assert.equal(value, true, `${flag} is advertised only when true`);
  return Object.keys(flags).sort();
}

describe("AppServer capability flags and what is not served", () => {
  test("plain nexo app-server: the core flags; absent and config methods say why they are -32601", async () => {
    const { server, capabilities } = await managedServer(undefined, processes);
    assert.deepEqual(flagsOf(capabilities), CORE);
    for (const [method, reason] of Object.entries(ABSENT_METHODS)) {
      const reply = await server.call(method, {});
      assert.equal(reply.error?.code, -32601, method);
      assert.equal(reply.error?.data?.detail, reason, method);
    }
    for (const method of [
      "mcp/list",
      "workspace/config/update",
      "skills/setEnabled",
      "subagent/profiles/list",
    ]) {
      const reply = await server.call(method, {});
      assert.equal(reply.error?.code, -32601, method);
      assert.match(reply.error?.data?.detail ?? "", /without a config directory.*--config DIR/, method);
    }
    const unknown = await server.call("nothing/here", {});
    assert.equal(unknown.error?.code, -32601);
    assert.match(unknown.error?.data?.detail ?? "", /does not implement 'nothing\/here'/);
    // Before initialize, a method that is not served is -32002 like every other.
    const fresh = new AppServerProcess();
    processes.push(fresh);
    assert.equal((await fresh.call("cron/list", {})).error?.code, -32002);
  });

  test("--config DIR: the config flags too; live status says where it is served", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML });
    const { server, capabilities } = await managedServer(config, processes);
    assert.deepEqual(flagsOf(capabilities), [...CORE, ...CONFIG].sort());
    for (const method of ["mcp/status/list", "channel/status"]) {
      const reply = await server.call(method, {});
      assert.equal(reply.error?.code, -32601, method);
      assert.match(reply.error?.data?.detail ?? "", /served by the daemon's AppServer/, method);
    }
  });

  test("the daemon's AppServer: every flag nexo implements", async () => {
    const { client, capabilities } = await daemonServer(
      { "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: s }\n" },
      "ana",
      cleanups,
    );
    assert.deepEqual(flagsOf(capabilities), [...CORE, ...CONFIG, ...LIVE].sort());
    const reply = await client.call("cron/list", {});
    assert.equal(reply.error?.code, -32601);
    assert.equal(reply.error?.data?.detail, ABSENT_METHODS["cron/list"]);
  });
});
