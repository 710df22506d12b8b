/**
 * MCP servers that cannot be used are reported, with a reason, and leave nothing running.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { describe, test } from "node:test";
import type { McpServerConfigInput } from "../../../src/extensions/mcp/config.js";
import {
  McpConfigError,
  McpConnectError,
  McpManagerClosedError,
  McpNotConnectedError,
  McpServerExistsError,
} from "../../../src/extensions/mcp/errors.js";
import { McpManager } from "../../../src/extensions/mcp/manager.js";
import { echoServerConfig } from "../../fixtures/mcp-helpers.js";
import { pidsWithMarker, recordingLogger } from "../../fixtures/processes.js";

/** The echo fixture exiting before the handshake; `marker` lets the test find its process. */
function exitsAtStart(marker: string): McpServerConfigInput {
  const config = echoServerConfig({ env: { MCP_FIXTURE_MODE: "exit-at-start" } });
  if (config.transport !== "stdio") throw new Error("unreachable");
  return { ...config, args: [...(config.args ?? []), marker] };
}

/**
 * A process that starts at once, says something on stderr and never speaks MCP. Plain node, not
 * the tsx fixture, so the stderr line is there long before any timeout, however loaded the machine.
 */
function hangs(marker: string, startupMs: number): McpServerConfigInput {
  return {
    transport: "stdio",
    command: process.execPath,
    args: [
      "-e",
      "process.stderr.write('fixture: pretending to be busy\\n'); setInterval(() => {}, 1000)",
      marker,
    ],
    startup_timeout_ms: startupMs,
  };
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const rejectsWith = async <E extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> => {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${type.name}`);
};

describe("connectAll reports every server", () => {
  test("one good server and five broken ones: each broken one is failed with its reason, and logged", async () => {
    const logger = recordingLogger();
    const manager = new McpManager({ logger, closeGraceMs: 300 });
    const marker = `nexo-mcp-failures-${randomUUID()}`;
    const port = await closedPort();
    try {
      const started = Date.now();
      const statuses = await manager.connectAll({
        servers: {
          good: echoServerConfig(),
          missing: { transport: "stdio", command: "nexo-no-such-command-4242" },
          early_exit: exitsAtStart(marker),
          silent: hangs(marker, 1500),
          nowhere: { transport: "stdio", command: "node", cwd: "/nonexistent/nexo-mcp-dir" },
          refused: {
            transport: "streamable_http",
            url: `http://127.0.0.1:${port}/mcp`,
            startup_timeout_ms: 5000,
          },
          off: { transport: "stdio", command: "nexo-no-such-command-4242", enabled: false },
        },
      });
      const elapsed = Date.now() - started;

      const byName = new Map(statuses.map((status) => [status.name, status]));
      assert.deepEqual(
        statuses.map((status) => status.name),
        ["good", "missing", "early_exit", "silent", "nowhere", "refused"],
        "every enabled server has a status, in file order; the disabled one is not started",
      );
      assert.equal(byName.get("good")?.state, "connected");
      assert.ok((byName.get("good")?.tools.length ?? 0) > 5);
      assert.deepEqual(byName.get("missing"), {
        name: "missing",
        transport: "stdio",
        state: "failed",
        tools: [],
        error: "command not found: nexo-no-such-command-4242",
      });
      assert.equal(
        byName.get("early_exit")?.error,
        "exited with code 3 during startup; stderr: fixture: missing FAKE_API_KEY, giving up",
      );
      assert.equal(
        byName.get("silent")?.error,
        "did not complete the MCP handshake within 1500 ms; stderr: fixture: pretending to be busy",
      );
      assert.equal(
        byName.get("nowhere")?.error,
        "working directory /nonexistent/nexo-mcp-dir does not exist",
      );
      assert.match(byName.get("refused")?.error ?? "", /^the MCP handshake failed: .*ECONNREFUSED/);
      for (const name of ["missing", "early_exit", "silent", "nowhere", "refused"]) {
        assert.equal(byName.get(name)?.state, "failed", name);
        const logged = logger.entries.find(
          (entry) => entry.level === "error" && entry.fields.mcp_server === name,
        );
        assert.ok(logged, `the failure of ${name} was not logged`);
        assert.equal(logged.message, "MCP server failed to connect");
        assert.equal(logged.fields.reason, byName.get(name)?.error);
      }
      assert.ok(
        logger.entries.some(
          (entry) => entry.fields.mcp_server === "off" && /disabled/.test(entry.message ?? ""),
        ),
      );

      // Concurrent: the total is bounded by the slowest server, not the sum.
      assert.ok(elapsed < 15_000, `connectAll took ${elapsed} ms`);
      // Only the good server contributes tools; nothing of the broken ones is left running.
      assert.ok(manager.tools().every((tool) => tool.name.startsWith("mcp__good__")));
      assert.deepEqual(pidsWithMarker(marker), []);

      // A failed server's name answers calls with the reason it failed.
      const call = await rejectsWith(manager.callTool("missing", "echo", {}), McpNotConnectedError);
      assert.equal(
        call.message,
        "MCP server missing is not connected (command not found: nexo-no-such-command-4242)",
      );
    } finally {
      await manager.close();
    }
  });

  test("an invalid config is refused as a whole, with every problem", async () => {
    const manager = new McpManager({ logger: recordingLogger() });
    const error = await rejectsWith(
      manager.connectAll({
        servers: {
          "a.b": { transport: "stdio", command: "x" },
          ok: { transport: "streamable_http", url: "not a url" },
        },
      }),
      McpConfigError,
    );
    assert.equal(error.code, "mcp_invalid_config");
    assert.equal(error.issues.length, 2);
    assert.match(error.message, /servers\["a\.b"\]: server name "a\.b" must be 1-32 characters/);
    assert.match(error.message, /servers\.ok\.url: url must be an http\(s\) URL/);
  });
});

describe("connect (one server, e.g. json-stream's add_mcp_server)", () => {
  test("failures throw McpConnectError with the step and the server's stderr, and are kept as status", async () => {
    const manager = new McpManager({ logger: recordingLogger(), closeGraceMs: 300 });
    const marker = `nexo-mcp-connect-${randomUUID()}`;
    try {
      const missing = await rejectsWith(
        manager.connect("missing", { transport: "stdio", command: "nexo-no-such-command-4242" }),
        McpConnectError,
      );
      assert.equal(missing.code, "mcp_connect_failed");
      assert.equal(missing.failure, "spawn");
      assert.equal(
        missing.message,
        'MCP server "missing" failed to connect: command not found: nexo-no-such-command-4242',
      );

      const exited = await rejectsWith(manager.connect("early", exitsAtStart(marker)), McpConnectError);
      assert.equal(exited.failure, "exited");
      assert.deepEqual(exited.stderrTail, ["fixture: missing FAKE_API_KEY, giving up"]);

      const slow = await rejectsWith(manager.connect("slow", hangs(marker, 800)), McpConnectError);
      assert.equal(slow.failure, "timeout");
      assert.deepEqual(pidsWithMarker(marker), []);

      assert.deepEqual(
        manager.statuses().map((status) => [status.name, status.state]),
        [
          ["missing", "failed"],
          ["early", "failed"],
          ["slow", "failed"],
        ],
      );
    } finally {
      await manager.close();
    }
  });

  test("bad names and bad configs are McpConfigError; a second connect of a live name is refused", async () => {
    const manager = new McpManager({ logger: recordingLogger(), closeGraceMs: 300 });
    try {
      const badName = await rejectsWith(manager.connect("a__b", echoServerConfig()), McpConfigError);
      assert.match(badName.message, /must not contain "__"/);
      const badConfig = await rejectsWith(
        manager.connect("x", { transport: "sse", url: "http://x/" } as unknown as McpServerConfigInput),
        McpConfigError,
      );
      assert.match(badConfig.message, /^MCP server "x" is not valid: transport: .*"sse"/);

      await manager.connect("once", echoServerConfig());
      await rejectsWith(manager.connect("once", echoServerConfig()), McpServerExistsError);
      assert.equal(manager.statuses().length, 1);
    } finally {
      await manager.close();
    }
  });

  test("close() gives up a connection still starting; a closed manager connects nothing", async () => {
    const manager = new McpManager({ logger: recordingLogger(), closeGraceMs: 300 });
    const marker = `nexo-mcp-abandon-${randomUUID()}`;
    const pending = manager.connect("stuck", hangs(marker, 60_000));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = Date.now();
    await manager.close();
    // close() waited for the abandoned attempt to clean up.
    assert.deepEqual(pidsWithMarker(marker), []);
    assert.ok(Date.now() - started < 5000);
    const error = await rejectsWith(pending, McpConnectError);
    assert.equal(error.failure, "cancelled");
    await rejectsWith(manager.connect("later", echoServerConfig()), McpManagerClosedError);
    await rejectsWith(manager.callTool("nobody", "echo", {}), McpNotConnectedError);
  });
});
