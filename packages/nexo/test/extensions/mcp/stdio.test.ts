/**
 * The MCP client against a real stdio MCP server (the SDK's McpServer, run as a child process).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { Tool } from "../../../src/engine/types.js";
import { serverConfigFromFields } from "../../../src/extensions/mcp/config.js";
import { McpManager } from "../../../src/extensions/mcp/manager.js";
import { ProcessGroupRegistry } from "../../../src/process/registry.js";
import { echoServerConfig, FIXTURE_STARTUP_MS, nextEvent, toolContext } from "../../fixtures/mcp-helpers.js";
import { TINY_PNG_BASE64 } from "../../fixtures/mcp-tools.js";
import { isGone, pidsWithMarker, recordingLogger, waitUntil } from "../../fixtures/processes.js";

const SECRET_NAME = "NEXO_MCP_TEST_SECRET";

describe("MCP over stdio", () => {
  const logger = recordingLogger();
  let manager: McpManager;
  let tools: Map<string, Tool>;

  before(async () => {
    // A secret in the daemon's environment that no server was given.
    process.env[SECRET_NAME] = "do-not-leak";
    manager = new McpManager({ logger, closeGraceMs: 500 });
    const statuses = await manager.connectAll({
      servers: { echo: echoServerConfig({ env: { FIXTURE_GIVEN: "given-value" }, call_timeout_ms: 1500 }) },
    });
    assert.equal(statuses.length, 1);
    assert.equal(statuses[0]?.state, "connected", statuses[0]?.error);
    tools = new Map(manager.tools().map((tool) => [tool.name, tool]));
  });

  after(async () => {
    delete process.env[SECRET_NAME];
    await manager.close();
  });

  const call = async (name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) => {
    const tool = tools.get(name);
    assert.ok(tool, `no tool ${name}; have ${[...tools.keys()].join(", ")}`);
    return tool.execute(args, toolContext(signal));
  };

  test("the server's tools are listed under namespaced names, as MCP tools", () => {
    const names = [...tools.keys()].sort();
    assert.ok(names.includes("mcp__echo__echo"));
    assert.ok(names.includes("mcp__echo__add"));
    // "files.read" is not a valid provider tool name; it is cleaned.
    assert.ok(names.includes("mcp__echo__files_read"));
    for (const name of names) assert.match(name, /^mcp__echo__[a-zA-Z0-9_-]+$/);
    const echo = tools.get("mcp__echo__echo");
    assert.equal(echo?.category, "mcp");
    assert.equal(echo?.source, "mcp");
    assert.equal(echo?.description, "Returns its text");
    assert.equal(echo?.inputSchema.type, "object");
    assert.deepEqual(echo?.inputSchema.required, ["text"]);
    assert.equal(echo?.describe?.({ text: "hi" }), 'MCP echo/echo: {"text":"hi"}');
    assert.match(echo?.describe?.({ text: "x".repeat(200) }) ?? "", /^MCP echo\/echo: \{"text":"x+…$/);
    assert.deepEqual(manager.status("echo")?.tools.sort(), names);
  });

  test("calls return the server's text", async () => {
    assert.equal((await call("mcp__echo__echo", { text: "héllo" })).output, "héllo");
    assert.equal((await call("mcp__echo__add", { a: 2, b: 40 })).output, "42");
    assert.equal((await call("mcp__echo__files_read", { path: "/a" })).output, "would read /a");
  });

  test("error results and throwing handlers come back as error outputs", async () => {
    const failed = await call("mcp__echo__fail", { message: "it went wrong" });
    assert.equal(failed.isError, true);
    assert.equal(failed.output, "it went wrong");
    const thrown = await call("mcp__echo__throws");
    assert.equal(thrown.isError, true);
    assert.match(thrown.output, /the handler blew up/);
  });

  test("arguments the server rejects are an error output, not an exception", async () => {
    const output = await call("mcp__echo__add", { a: "two", b: 1 });
    assert.equal(output.isError, true);
    assert.match(output.output, /a/);
  });

  test("a lone image is an image output; mixed content is text", async () => {
    const image = await call("mcp__echo__image");
    assert.equal(image.outputType, "image");
    assert.equal(image.output, TINY_PNG_BASE64);
    assert.equal(image.metadata?.media_type, "image/png");
    const mixed = await call("mcp__echo__mixed");
    assert.equal(mixed.outputType, undefined);
    assert.match(
      mixed.output,
      /^a caption\n\[image image\/png, \d+ bytes, not shown\]\n\[resource file:\/\/\/notes.txt\]\nresource text$/,
    );
  });

  test("aborting a call returns promptly and cancels it on the server", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = call("mcp__echo__slow", { ms: 10_000 }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const output = await pending;
    assert.ok(Date.now() - started < 3000, "the aborted call took too long");
    assert.equal(output.isError, true);
    assert.equal(output.output, "MCP echo/slow was cancelled");
    // The server saw notifications/cancelled and stopped its handler.
    let stats = "";
    for (let i = 0; i < 50 && !stats.includes('"cancelled":1'); i++) {
      stats = (await call("mcp__echo__stats")).output;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(stats, '{"cancelled":1}');
  });

  test("a call that exceeds the per-call timeout is an error naming the limit", async () => {
    const output = await call("mcp__echo__slow", { ms: 10_000 });
    assert.equal(output.isError, true);
    assert.equal(output.output, "MCP server echo did not answer slow within 1500 ms");
  });

  test("the server sees only the base every child gets and its configured env: no daemon secrets", async () => {
    assert.equal((await call("mcp__echo__env", { name: SECRET_NAME })).output, "(unset)");
    assert.equal((await call("mcp__echo__env", { name: "FIXTURE_GIVEN" })).output, "given-value");
    assert.equal((await call("mcp__echo__env", { name: "HOME" })).output, process.env.HOME);
    // The lineage tag: how the reaper finds what the server started, even after a setsid.
    assert.match((await call("mcp__echo__env", { name: "NEXO_PROCESS_TAG" })).output, /^[0-9a-f]{12}\./);
    const keys = JSON.parse((await call("mcp__echo__env_keys")).output) as string[];
    const allowed = new Set([
      ...["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "NEXO_PROCESS_TAG"],
      "FIXTURE_GIVEN",
    ]);
    assert.deepEqual(
      keys.filter((key) => !allowed.has(key)),
      [],
      `unexpected variables in the server: ${keys.join(", ")}`,
    );
  });

  test("tools/list_changed refreshes the tools and tells listeners", async () => {
    const changed = nextEvent(
      manager,
      "toolsChanged",
      (server) =>
        server === "echo" && manager.tools("echo").some((tool) => tool.name === "mcp__echo__late_tool"),
    );
    assert.equal((await call("mcp__echo__add_tool", { name: "late_tool" })).output, "added late_tool");
    await changed;
    const late = manager.tools("echo").find((tool) => tool.name === "mcp__echo__late_tool");
    assert.ok(late);
    assert.equal((await late.execute({}, toolContext())).output, "late_tool ran");
    assert.ok(manager.status("echo")?.tools.includes("mcp__echo__late_tool"));
  });

  test("the tools register in the engine's tool registry and run through it", async () => {
    const registry = new ToolRegistry();
    registry.registerAll(manager.tools());
    assert.equal(registry.categoryOf("mcp__echo__add"), "mcp");
    const output = await registry.invoke("mcp__echo__add", { a: 1, b: 2 }, toolContext());
    assert.equal(output.output, "3");
    // The registry validates against the server's schema before the call leaves the process.
    const invalid = await registry.invoke("mcp__echo__add", { a: 1 }, toolContext());
    assert.equal(invalid.isError, true);
    assert.match(invalid.output, /\/b is required/);
  });
});

describe("MCP stdio server lifecycle", () => {
  test("a server that crashes is restarted under the restart policy, then gives up in a crash loop", async () => {
    const logger = recordingLogger();
    const manager = new McpManager({ logger, closeGraceMs: 500 });
    try {
      // One restart within the window; the second crash is a crash loop.
      await manager.connect(
        "crashy",
        echoServerConfig({ restart: { max_restarts: 1, initial_delay_ms: 300, jitter: 0 } }),
      );
      const firstPid = manager.pidOf("crashy");
      assert.ok(firstPid !== undefined);
      const tool = (name: string) => {
        const found = manager.tools("crashy").find((candidate) => candidate.name === `mcp__crashy__${name}`);
        assert.ok(found, `no tool ${name}`);
        return found;
      };

      const restarting = nextEvent(manager, "serverState", (status) => status.state === "restarting");
      const back = nextEvent(manager, "serverState", (status) => status.state === "connected");
      const crashed = await tool("crash").execute({}, toolContext());
      assert.equal(crashed.isError, true);
      assert.match(
        crashed.output,
        /^MCP server crashy is not connected \(exited with code 7; restarting in 300 ms; stderr: fixture: ready\nfixture: crashing on request\)$/,
      );
      const [during] = await restarting;
      assert.match(during.error ?? "", /^exited with code 7; restarting in 300 ms/);
      await back;
      const secondPid = manager.pidOf("crashy");
      assert.ok(secondPid !== undefined && secondPid !== firstPid, "a new process answers");
      await waitUntil(() => isGone(firstPid), 5000, "the crashed process to be gone");
      assert.equal((await tool("echo").execute({ text: "again" }, toolContext())).output, "again");
      assert.equal(manager.status("crashy")?.error, undefined);

      const failed = nextEvent(manager, "serverState", (status) => status.state === "failed");
      await tool("crash").execute({}, toolContext());
      const [status] = await failed;
      assert.match(
        status.error ?? "",
        /^exited with code 7; crash loop: 2 crashes within 60 s \(limit 1 restarts\); stderr: /,
      );
      // Its tools are still offered, and explain themselves.
      const later = await tool("echo").execute({ text: "anyone?" }, toolContext());
      assert.equal(later.isError, true);
      assert.match(later.output, /^MCP server crashy is not connected \(exited with code 7; crash loop/);
      assert.ok(
        logger.entries.some((entry) => entry.level === "error" && entry.message === "MCP server went away"),
      );
      assert.equal(manager.pidOf("crashy"), undefined);
      await waitUntil(() => isGone(secondPid), 5000, "the second process to be gone");
    } finally {
      await manager.close();
    }
  });

  test("with respawn off a crash is final, and the server may be connected again", async () => {
    const manager = new McpManager({ logger: recordingLogger(), closeGraceMs: 500 });
    try {
      await manager.connectAll({ restart: { respawn: false }, servers: { crashy: echoServerConfig() } });
      const crash = manager.tools("crashy").find((tool) => tool.name === "mcp__crashy__crash");
      const echo = manager.tools("crashy").find((tool) => tool.name === "mcp__crashy__echo");
      assert.ok(crash && echo);
      const lost = nextEvent(manager, "serverState", (status) => status.state === "failed");
      const output = await crash.execute({}, toolContext());
      assert.equal(
        output.output,
        "MCP server crashy is not connected (exited with code 7; respawn is disabled; stderr: fixture: ready\nfixture: crashing on request)",
      );
      await lost;
      const again = await manager.connect("crashy", echoServerConfig());
      assert.equal(again.state, "connected");
      assert.equal((await echo.execute({ text: "back" }, toolContext())).output, "back");
    } finally {
      await manager.close();
    }
  });

  test("a json-stream add_mcp_server command connects through serverConfigFromFields", async () => {
    const manager = new McpManager({ logger: recordingLogger(), closeGraceMs: 500 });
    try {
      const fixtureConfig = echoServerConfig();
      assert.equal(fixtureConfig.transport, "stdio");
      const command = {
        type: "add_mcp_server",
        name: "added",
        transport: "stdio",
        command: fixtureConfig.command,
        args: fixtureConfig.args,
        env: {},
        url: "",
      };
      const status = await manager.connect(command.name, serverConfigFromFields(command), {
        startupTimeoutMs: FIXTURE_STARTUP_MS,
      });
      assert.equal(status.state, "connected");
      assert.ok(status.tools.includes("mcp__added__echo"));
    } finally {
      await manager.close();
    }
  });

  test("close() stops the server and every process it started, even one that left with setsid", async () => {
    const registry = new ProcessGroupRegistry();
    const manager = new McpManager({ logger: recordingLogger(), closeGraceMs: 500, registry });
    await manager.connect("tree", echoServerConfig());
    const pid = manager.pidOf("tree");
    assert.ok(pid !== undefined);
    // Registered with the reaper like every supervised child: the exit hooks and the ledger see it.
    assert.deepEqual(registry.entries(), [{ pgid: pid, label: "mcp:tree" }]);
    const marker = `nexo-mcp-grandchild-${randomUUID()}`;
    const spawnTool = manager.tools("tree").find((tool) => tool.name === "mcp__tree__spawn_grandchild");
    assert.ok(spawnTool);
    const grandchild = Number((await spawnTool.execute({ marker }, toolContext())).output);
    const escapee = Number((await spawnTool.execute({ marker, setsid: true }, toolContext())).output);
    assert.ok(Number.isInteger(grandchild) && !isGone(grandchild));
    assert.ok(Number.isInteger(escapee) && !isGone(escapee));

    const removed = nextEvent(manager, "toolsChanged", (server) => server === "tree");
    await manager.close();
    await removed;
    assert.ok(isGone(pid), "the server process is still running");
    await waitUntil(() => isGone(grandchild) && isGone(escapee), 3000, "the grandchildren to be gone");
    assert.deepEqual(pidsWithMarker(marker), []);
    assert.equal(registry.size, 0);
    assert.deepEqual(manager.tools(), []);
    assert.deepEqual(manager.statuses(), []);
  });
});
