/**
 * `nexo/admin/mcp/*` over a real daemon and a real stdio MCP server (the echo fixture): upsert
 * writes mcp.yaml and answers once the server is connected (its tools live), a definition nexo
 * cannot run is refused with nothing written, delete disconnects it.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { echoServerConfig } from "../../fixtures/mcp-helpers.js";
import { isGone } from "../../fixtures/processes.js";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
`;

const MCP = `# MCP servers of the test deployment.
servers: {}
`;

describe("admin mcp/*", () => {
  let admin: DaemonAdmin;
  const echo = echoServerConfig();
  before(async () => {
    admin = await daemonAdmin({ "agents.yaml": AGENTS, "mcp.yaml": MCP }, ["mcp_crud"]);
  });
  after(() => admin?.stop());

  it("are refused without mcp_crud", async () => {
    for (const [method, params] of [
      ["nexo/admin/mcp/list", {}],
      ["nexo/admin/mcp/get", { name: "echo" }],
      ["nexo/admin/mcp/upsert", { name: "echo", transport: "stdio", command: "true" }],
      ["nexo/admin/mcp/delete", { name: "echo" }],
    ] as const) {
      assertDenied(admin, await admin.viewer(method, params), method, "mcp_crud");
    }
    assert.ok(!admin.env.read("mcp.yaml").includes("echo"));
  });

  it("upsert: writes the server, comments kept, and answers with it connected and its tools live", async () => {
    const answer = resultOf<{ created: boolean; server: Record<string, unknown> }>(
      await admin.ops("nexo/admin/mcp/upsert", {
        name: "echo",
        transport: "stdio",
        command: echo.transport === "stdio" ? echo.command : "",
        args: echo.transport === "stdio" ? echo.args?.map(String) : [],
      }),
    );
    assert.equal(answer.created, true);
    assert.equal(answer.server.state, "connected");
    assert.ok((answer.server.tools as string[]).includes("mcp__echo__echo"));
    assert.ok(admin.env.read("mcp.yaml").startsWith("# MCP servers of the test deployment.\n"));
    assert.ok(admin.env.daemon.mcp?.tools().some((tool) => tool.name === "mcp__echo__echo"));

    const { servers } = resultOf<{ servers: { name: string; transport: string }[] }>(
      await admin.ops("nexo/admin/mcp/list", {}),
    );
    assert.deepEqual(
      servers.map((s) => [s.name, s.transport]),
      [["echo", "stdio"]],
    );
    const got = resultOf<{ server: { command: string; env: object } }>(
      await admin.ops("nexo/admin/mcp/get", { name: "echo" }),
    );
    assert.equal(got.server.command, process.execPath);
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/mcp/get", { name: "nope" })), { server: null });
  });

  it("upsert: a changed definition reconnects the server (a new process)", async () => {
    const firstPid = admin.env.daemon.mcp?.pidOf("echo");
    const { server } = resultOf<{ server: { env: Record<string, string>; state: string } }>(
      await admin.ops("nexo/admin/mcp/upsert", {
        name: "echo",
        transport: "stdio",
        command: echo.transport === "stdio" ? echo.command : "",
        args: echo.transport === "stdio" ? echo.args?.map(String) : [],
        env: { GREETING: "hi" },
      }),
    );
    assert.deepEqual([server.env, server.state], [{ GREETING: "hi" }, "connected"]);
    assert.notEqual(admin.env.daemon.mcp?.pidOf("echo"), firstPid);
    assert.ok(firstPid !== undefined && isGone(firstPid));
  });

  it("upsert: what nexo cannot run is -32602 and nothing is written", async () => {
    const beforeText = admin.env.read("mcp.yaml");
    for (const params of [
      { name: "a", transport: "stdio" },
      { name: "b", transport: "sse", url: "http://127.0.0.1:9/sse" },
      { name: "c", transport: "auto", url: "http://127.0.0.1:9/" },
      { name: "d", transport: "stdio", command: "true", log_level: "debug" },
      { name: "e", transport: "streamable_http", url: "ftp://x" },
      { name: "bad name!", transport: "stdio", command: "true" },
    ]) {
      errorOf(await admin.ops("nexo/admin/mcp/upsert", params), -32602);
    }
    assert.equal(admin.env.read("mcp.yaml"), beforeText);
  });

  it("delete: removes the entry and stops the server; absent is removed: false", async () => {
    const pid = admin.env.daemon.mcp?.pidOf("echo");
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/mcp/delete", { name: "echo" })), { removed: true });
    assert.ok(!admin.env.read("mcp.yaml").includes("echo"));
    assert.ok(pid !== undefined && isGone(pid));
    assert.deepEqual(resultOf(await admin.ops("nexo/admin/mcp/delete", { name: "echo" })), {
      removed: false,
    });
    errorOf(await admin.ops("nexo/admin/mcp/delete", {}), -32602);
  });
});
