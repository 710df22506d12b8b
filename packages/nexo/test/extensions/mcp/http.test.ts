/**
 * The MCP client against a real streamable-HTTP MCP server (the SDK's transport over node:http,
 * in this process, on 127.0.0.1).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { Tool } from "../../../src/engine/types.js";
import { McpConnectError } from "../../../src/extensions/mcp/errors.js";
import { McpManager } from "../../../src/extensions/mcp/manager.js";
import { nextEvent, toolContext } from "../../fixtures/mcp-helpers.js";
import { type HttpMcpServer, startHttpMcpServer } from "../../fixtures/mcp-http-server.js";
import { TINY_PNG_BASE64 } from "../../fixtures/mcp-tools.js";
import { recordingLogger } from "../../fixtures/processes.js";

const TOKEN = "test-token-123";

describe("MCP over streamable HTTP", () => {
  let server: HttpMcpServer;
  let manager: McpManager;
  const logger = recordingLogger();
  const tool = (name: string): Tool => {
    const found = manager.tools("web").find((candidate) => candidate.name === name);
    assert.ok(found, `no tool ${name}`);
    return found;
  };

  before(async () => {
    server = await startHttpMcpServer({ token: TOKEN });
    manager = new McpManager({ logger });
    const statuses = await manager.connectAll({
      call_timeout_ms: 5000,
      servers: {
        web: {
          transport: "streamable-http",
          url: server.url,
          headers: { Authorization: `Bearer ${TOKEN}` },
          startup_timeout_ms: 5000,
        },
      },
    });
    assert.equal(statuses[0]?.state, "connected", statuses[0]?.error);
    assert.equal(statuses[0]?.transport, "streamable_http");
  });

  after(async () => {
    await manager.close();
    await server.close();
  });

  test("tools are listed namespaced and called, with the configured headers", async () => {
    assert.ok(manager.status("web")?.tools.includes("mcp__web__echo"));
    assert.equal(
      (await tool("mcp__web__echo").execute({ text: "over http" }, toolContext())).output,
      "over http",
    );
    assert.equal((await tool("mcp__web__add").execute({ a: 0.5, b: 0.25 }, toolContext())).output, "0.75");
    const image = await tool("mcp__web__image").execute({}, toolContext());
    assert.equal(image.outputType, "image");
    assert.equal(image.output, TINY_PNG_BASE64);
    const failed = await tool("mcp__web__fail").execute({ message: "remote failure" }, toolContext());
    assert.deepEqual([failed.isError, failed.output], [true, "remote failure"]);
  });

  test("aborting a call cancels it on the server", async () => {
    const controller = new AbortController();
    const pending = tool("mcp__web__slow").execute({ ms: 10_000 }, toolContext(controller.signal));
    setTimeout(() => controller.abort(), 100);
    const output = await pending;
    assert.deepEqual([output.isError, output.output], [true, "MCP web/slow was cancelled"]);
    let stats = "";
    for (let i = 0; i < 50 && !stats.includes('"cancelled":1'); i++) {
      stats = (await tool("mcp__web__stats").execute({}, toolContext())).output;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(stats, '{"cancelled":1}');
  });

  test("tools/list_changed arrives over the server's event stream and refreshes the tools", async () => {
    const changed = nextEvent(
      manager,
      "toolsChanged",
      (name) =>
        name === "web" && manager.tools("web").some((candidate) => candidate.name === "mcp__web__http_late"),
    );
    await tool("mcp__web__add_tool").execute({ name: "http_late" }, toolContext());
    await changed;
    assert.equal((await tool("mcp__web__http_late").execute({}, toolContext())).output, "http_late ran");
  });

  test("closing a server ends its MCP session on the server", async () => {
    const extra = new McpManager({ logger: recordingLogger() });
    await extra.connect("second", {
      transport: "streamable_http",
      url: server.url,
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    const before = server.openSessions().length;
    await extra.close();
    assert.equal(server.openSessions().length, before - 1);
    assert.equal(server.terminated.length, 1);
  });
});

describe("MCP over streamable HTTP: failures", () => {
  test("a wrong token is a failed connection that says HTTP 401", async () => {
    const server = await startHttpMcpServer({ token: TOKEN });
    const manager = new McpManager({ logger: recordingLogger() });
    try {
      const error = await manager
        .connect("locked", {
          transport: "streamable_http",
          url: server.url,
          headers: { Authorization: "Bearer wrong" },
        })
        .then(
          () => assert.fail("connected with a wrong token"),
          (failure: unknown) => failure,
        );
      assert.ok(error instanceof McpConnectError);
      assert.equal(error.failure, "handshake");
      assert.match(
        error.reason,
        /^the MCP handshake failed: HTTP 401 \(check the server.s headers, e.g. Authorization\): .*missing or wrong bearer token$/,
      );
      assert.equal(manager.status("locked")?.state, "failed");
    } finally {
      await manager.close();
      await server.close();
    }
  });

  test("a server that accepts the connection but never answers times out", async () => {
    const silent: Server = createServer(() => {
      // Never respond.
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    const manager = new McpManager({ logger: recordingLogger() });
    try {
      const [status] = await manager.connectAll({
        servers: {
          mute: {
            transport: "streamable_http",
            url: `http://127.0.0.1:${port}/mcp`,
            startup_timeout_ms: 700,
          },
        },
      });
      assert.deepEqual(status, {
        name: "mute",
        transport: "streamable_http",
        state: "failed",
        tools: [],
        error: "did not complete the MCP handshake within 700 ms",
      });
    } finally {
      await manager.close();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe("MCP over streamable HTTP: a session the server expired", () => {
  let server: HttpMcpServer;
  let manager: McpManager;
  const logger = recordingLogger();
  const echo = async (text: string) => {
    const found = manager.tools("web").find((candidate) => candidate.name === "mcp__web__echo");
    assert.ok(found, "no echo tool");
    return found.execute({ text }, toolContext());
  };

  before(async () => {
    server = await startHttpMcpServer();
    manager = new McpManager({ logger });
    await manager.connect("web", { transport: "streamable_http", url: server.url, startup_timeout_ms: 5000 });
  });

  after(async () => {
    await manager.close();
    await server.close();
  });

  test("a call answered 404 for the expired session starts a new session and is sent again", async () => {
    assert.equal((await echo("first")).output, "first");
    const expired = await server.expireSessions();
    assert.equal(expired.length, 1);
    const opened = server.openedCount();

    const output = await echo("after expiry");
    assert.deepEqual([output.isError, output.output], [undefined, "after expiry"]);
    assert.equal(server.openedCount(), opened + 1, "exactly one new session");
    assert.equal(server.openSessions().length, 1);
    assert.notEqual(server.openSessions()[0], expired[0]);
    assert.equal(manager.status("web")?.state, "connected");
    assert.ok(logger.entries.some((entry) => entry.message === "MCP session expired; starting a new one"));
  });

  test("calls that all hit the expired session share one new session", async () => {
    await server.expireSessions();
    const opened = server.openedCount();
    const outputs = await Promise.all(["a", "b", "c", "d"].map((text) => echo(text)));
    assert.deepEqual(
      outputs.map((output) => output.output),
      ["a", "b", "c", "d"],
    );
    assert.equal(server.openedCount(), opened + 1);
  });

  test("when no new session can be started the call says why; the next call tries again", async () => {
    await server.expireSessions();
    server.refuseNewSessions(true);
    const refused = await echo("refused");
    assert.equal(refused.isError, true);
    assert.match(
      refused.output,
      /^MCP server web is not connected \(its session expired and a new one could not be started: HTTP 503/,
    );
    server.refuseNewSessions(false);
    assert.equal((await echo("back")).output, "back");
    assert.equal(manager.status("web")?.state, "connected");
  });
});
