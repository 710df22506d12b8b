/**
 * `mcp/*` through the real `nexo app-server --config DIR`: listing mcp.yaml in the protocol's
 * words, replacing and removing entries with comments kept, the family's error codes, the
 * `workspace/configChanged` broadcast, and the flags: `mcpManagement` only with a config
 * directory, `mcpStatus` never in a standalone server (nothing runs there to have a status).
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { echoServerConfig } from "../../../fixtures/mcp-helpers.js";
import type { AppServerProcess } from "../../../helpers/appserver-client.js";
import { AGENTS_YAML, configDir, LLM_YAML, MCP_YAML, managedServer } from "./management-helpers.js";

const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

describe("AppServer mcp/*", () => {
  test("without a config directory the family is off: no flag, -32601", async () => {
    const { server, capabilities } = await managedServer(undefined, processes);
    assert.equal(capabilities.mcpManagement, undefined);
    assert.equal(capabilities.mcpStatus, undefined);
    const reply = await server.call("mcp/list", {});
    assert.equal(reply.error?.code, -32601);
  });

  test("list and get show mcp.yaml's servers; a standalone server has no mcp/status/list", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML, "mcp.yaml": MCP_YAML });
    const { server, capabilities } = await managedServer(config, processes);
    assert.equal(capabilities.mcpManagement, true);
    assert.equal(capabilities.mcpStatus, undefined);
    const { servers } = await server.request<{ servers: Array<Record<string, unknown>> }>("mcp/list", {});
    assert.deepEqual(servers, [
      {
        name: "files",
        enabled: true,
        transport: "stdio",
        command: "node",
        args: ["server.js"],
        env: {},
        origin: { kind: "workspace" },
        readOnly: false,
      },
    ]);
    const got = await server.request<{ server: { name: string } }>("mcp/get", { name: "files" });
    assert.equal(got.server.name, "files");
    const missing = await server.call("mcp/get", { name: "nope" });
    assert.equal(missing.error?.code, -32070);
    assert.match(missing.error?.data?.detail ?? "", /nope/);
    assert.equal((await server.call("mcp/status/list", {})).error?.code, -32601);
    assert.equal((await server.call("mcp/get", {})).error?.code, -32602);
  });

  test("upsert replaces a whole entry and adds new ones, keeping the file's comments; remove deletes", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML, "mcp.yaml": MCP_YAML });
    const { server } = await managedServer(config, processes);
    const created = await server.request<{ server: Record<string, unknown> }>("mcp/upsert", {
      server: {
        name: "docs",
        transport: "streamableHttp",
        url: "https://docs.example.com/mcp",
        httpHeaders: { Authorization: "Bearer ${DOCS_TOKEN}" },
        startupTimeoutSec: 5,
      },
    });
    assert.equal(created.server.transport, "streamableHttp");
    assert.equal(created.server.startupTimeoutSec, 5);
    const changed = await server.waitFor((m) => m.method === "workspace/configChanged");
    assert.equal(changed.params?.source, "mcp/upsert");
    assert.deepEqual(changed.params?.regions, ["mcp"]);

    // Replacing "files" without args drops its args; its comment and the file's stay.
    await server.request("mcp/upsert", {
      server: { name: "files", transport: "stdio", command: "deno", enabled: false },
    });
    const text = config.read("mcp.yaml");
    assert.match(text, /# servers the agents may use/);
    assert.match(text, /files: # keep this one/);
    assert.match(text, /command: deno/);
    assert.doesNotMatch(text, /server\.js/);
    assert.match(text, /streamable_http/);
    assert.match(text, /startup_timeout_ms: 5000/);
    assert.match(text, /\$\{DOCS_TOKEN\}/);

    const listed = await server.request<{ servers: Array<{ name: string; enabled: boolean }> }>(
      "mcp/list",
      {},
    );
    assert.deepEqual(
      listed.servers.map((s) => [s.name, s.enabled]),
      [
        ["docs", true],
        ["files", false],
      ],
    );

    assert.deepEqual(await server.request("mcp/remove", { name: "docs" }), { removed: true });
    assert.doesNotMatch(config.read("mcp.yaml"), /docs/);
    assert.equal((await server.call("mcp/remove", { name: "docs" })).error?.code, -32070);
  });

  test("invalid entries are refused with -32072 / -32074 and the file is left as it was", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML, "mcp.yaml": MCP_YAML });
    const { server } = await managedServer(config, processes);
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ name: "x", transport: "stdio", command: "node", url: "http://a" }, -32072, /does not take url/],
      [{ name: "x", transport: "streamableHttp" }, -32072, /needs url/],
      [{ name: "bad name!", transport: "stdio", command: "node" }, -32072, /name/],
      [{ name: "x", transport: "streamableHttp", url: "ftp://nowhere" }, -32072, /mcp\.yaml.*url/s],
      [{ name: "FILES", transport: "stdio", command: "node" }, -32074, /only in case/],
    ];
    for (const [entry, code, detail] of cases) {
      const reply = await server.call("mcp/upsert", { server: entry });
      assert.equal(reply.error?.code, code, JSON.stringify(entry));
      assert.match(reply.error?.data?.detail ?? "", detail, JSON.stringify(reply.error));
    }
    assert.equal(
      (await server.call("mcp/upsert", { server: { name: "x", transport: "sse" } })).error?.code,
      -32602,
    );
    assert.equal(config.read("mcp.yaml"), MCP_YAML);
  });

  test("mcp/test probes an entry without saving it: tools counted, a dead server is success false", async () => {
    const config = configDir({ "agents.yaml": AGENTS_YAML, "llm.yaml": LLM_YAML, "mcp.yaml": MCP_YAML });
    const { server } = await managedServer(config, processes);
    const echo = echoServerConfig() as { command: string; args: string[] };
    const ok = await server.request<{ success: boolean; toolCount?: number }>("mcp/test", {
      server: {
        name: "echo",
        transport: "stdio",
        command: echo.command,
        args: echo.args,
        // Where `--import tsx` resolves (the config directory is a temporary one).
        cwd: fileURLToPath(new URL("../../../..", import.meta.url)),
        startupTimeoutSec: 20,
      },
    });
    assert.equal(ok.success, true, JSON.stringify(ok));
    assert.ok((ok.toolCount ?? 0) > 0, JSON.stringify(ok));

    const dead = await server.request<{ success: boolean; errorCode?: string; errorMessage?: string }>(
      "mcp/test",
      { server: { name: "dead", transport: "stdio", command: "/nonexistent/mcp-server-binary" } },
    );
    assert.equal(dead.success, false);
    assert.equal(dead.errorCode, "McpServerTestFailed");
    assert.match(dead.errorMessage ?? "", /\S/);

    // A placeholder that cannot be expanded, or a misplaced key, is a validation error.
    const unset = await server.call("mcp/test", {
      server: { name: "x", transport: "stdio", command: "${NEXO_TEST_UNSET_VARIABLE}" },
    });
    assert.equal(unset.error?.code, -32072, JSON.stringify(unset));
    assert.match(unset.error?.data?.detail ?? "", /NEXO_TEST_UNSET_VARIABLE/);
    const misplaced = await server.call("mcp/test", {
      server: { name: "x", transport: "stdio", command: "node", url: "http://a" },
    });
    assert.equal(misplaced.error?.code, -32072);

    // Nothing was written, and no workspace/configChanged was sent.
    assert.equal(config.read("mcp.yaml"), MCP_YAML);
    assert.equal(server.notifications("workspace/configChanged").length, 0);
  });
});
