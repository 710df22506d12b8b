/**
 * `mcp/status/list` where the MCP servers run: `nexo start` serving the AppServer from
 * appserver.yaml (the built CLI, a real config directory and the stdio echo MCP server). The
 * daemon advertises `mcpStatus`, reports the server ready with its tools, and an `mcp/upsert` that
 * disables it is applied (the server stopped) before the reply.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { stringify } from "yaml";
import { echoServerConfig } from "../../../fixtures/mcp-helpers.js";
import { daemonServer } from "./management-helpers.js";

const cleanups: Array<() => void | Promise<void>> = [];
after(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

type Status = { name: string; startupState: string; toolCount: number; enabled: boolean };

describe("AppServer mcp/status/list in the daemon", () => {
  test("live status of mcp.yaml's servers, and a change applied before the reply", async () => {
    const { client, capabilities } = await daemonServer(
      {
        "agents.yaml": "agents:\n  - id: ana\n    model: { provider: scripted, model: s }\n",
        "mcp.yaml": `# tools\n${stringify({ servers: { echo: echoServerConfig() } })}`,
      },
      "ana",
      cleanups,
    );
    assert.equal(capabilities.mcpStatus, true);
    assert.equal(capabilities.mcpManagement, true);

    const deadline = Date.now() + 30_000;
    let echo: Status | undefined;
    while (Date.now() < deadline) {
      const { servers } = await client.request<{ servers: Status[] }>("mcp/status/list", {});
      echo = servers.find((server) => server.name === "echo");
      if (echo?.startupState === "ready") break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(echo?.startupState, "ready", JSON.stringify(echo));
    assert.ok(echo!.toolCount > 0);

    const { server } = await client.request<{ server: { args: string[] } }>("mcp/get", { name: "echo" });
    await client.request("mcp/upsert", { server: { ...server, enabled: false } });
    const after = await client.request<{ servers: Status[] }>("mcp/status/list", {});
    assert.deepEqual(
      after.servers.map((s) => [s.name, s.startupState]),
      [["echo", "disabled"]],
    );
    // mcp/status/updated: the disabled state, then, enabled again, the manager's own transitions.
    const updates = () => client.notifications("mcp/status/updated").map((m) => m.params?.server as Status);
    assert.deepEqual(
      updates().map((s) => [s.name, s.startupState, s.enabled]),
      [["echo", "disabled", false]],
    );
    const mark = client.received.length;
    await client.request("mcp/upsert", { server: { ...server, enabled: true } });
    await client.waitFor(
      (m) => {
        const status = m.params?.server as Status | undefined;
        return m.method === "mcp/status/updated" && status?.startupState === "ready" && status.toolCount > 0;
      },
      "mcp/status/updated ready",
      mark,
    );
    const states = updates()
      .slice(1)
      .map((s) => s.startupState);
    assert.equal(states[0], "starting", JSON.stringify(states));
    assert.ok(states.includes("ready"), JSON.stringify(states));
  });
});
