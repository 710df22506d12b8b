/**
 * services.mcp against a real daemon and a real stdio MCP server (the echo fixture): an upsert
 * creates mcp.yaml and connects the server before it returns, its tools join the agents' shared
 * tools; a changed entry reconnects it (a new process); a delete disconnects it (the process is
 * gone); an invalid entry is refused with its location.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { InvalidConfigError, NotFoundError } from "../../../src/daemon/services/index.js";
import { echoServerConfig } from "../../fixtures/mcp-helpers.js";
import { isGone } from "../../fixtures/processes.js";
import { type DaemonDir, startFromDir } from "../../helpers/daemon-dir.js";

const AGENTS = "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n";

describe("services.mcp", () => {
  let env: DaemonDir;
  before(async () => {
    env = await startFromDir({ "agents.yaml": AGENTS });
  });
  after(() => env.daemon.stop("test over"));

  it("upsert creates mcp.yaml and connects the server before it returns", async () => {
    const { mcp } = env.daemon.services;
    assert.deepEqual(await mcp.list(), []);
    const result = await mcp.upsert("echo", echoServerConfig());
    assert.equal(result.created, true);
    assert.deepEqual(result.reload?.mcp, { added: ["echo"], removed: [], changed: [] });
    assert.equal(result.server.status?.state, "connected");
    assert.ok(result.server.status?.tools.includes("mcp__echo__echo"));
    assert.equal(result.server.entry.transport, "stdio");
    assert.equal(statSync(join(env.dir, "mcp.yaml")).mode & 0o777, 0o600, "created owner-only");
    assert.ok(env.daemon.mcp?.tools().some((tool) => tool.name === "mcp__echo__echo"));
    assert.deepEqual(
      mcp.status().map((s) => [s.name, s.state]),
      [["echo", "connected"]],
    );
  });

  it("a changed entry reconnects the server; an unchanged upsert touches nothing", async () => {
    const { mcp } = env.daemon.services;
    const firstPid = env.daemon.mcp!.pidOf("echo")!;
    const same = await mcp.upsert("echo", { transport: "stdio" });
    assert.deepEqual([same.created, same.reload], [false, undefined]);
    assert.equal(env.daemon.mcp!.pidOf("echo"), firstPid);

    const changed = await mcp.upsert("echo", { env: { GREETING: "hi" } });
    assert.deepEqual(changed.reload?.mcp.changed, ["echo"]);
    assert.equal(changed.server.status?.state, "connected");
    const secondPid = env.daemon.mcp!.pidOf("echo")!;
    assert.notEqual(secondPid, firstPid);
    assert.ok(isGone(firstPid), "the old server process is gone");
    assert.match(env.read("mcp.yaml"), /\n {4}env:\n {6}GREETING: hi\n/);
  });

  it("refuses an invalid entry with its location and leaves the running server alone", async () => {
    const { mcp } = env.daemon.services;
    const before = env.read("mcp.yaml");
    const error = await mcp.upsert("web", { transport: "sse" as "stdio" }).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof InvalidConfigError);
    assert.ok(error.issues[0]?.file?.endsWith("mcp.yaml"));
    assert.equal(error.issues[0]?.keyPath, "servers.web.transport");
    assert.match(error.issues[0]?.message ?? "", /"sse".*not supported/);
    assert.equal(env.read("mcp.yaml"), before);
    await assert.rejects(mcp.get("web"), NotFoundError);
    assert.equal((await mcp.get("echo")).status?.state, "connected");
  });

  it("delete disconnects the server and removes its tools", async () => {
    const { mcp } = env.daemon.services;
    const pid = env.daemon.mcp!.pidOf("echo")!;
    const result = await mcp.delete("echo");
    assert.equal(result.removed, true);
    assert.deepEqual(result.reload?.mcp.removed, ["echo"]);
    assert.ok(isGone(pid));
    assert.deepEqual(mcp.status(), []);
    assert.equal(env.daemon.mcp?.tools().length, 0);
    assert.deepEqual(await mcp.list(), []);
    assert.deepEqual(await mcp.delete("echo"), { removed: false, reload: undefined });
  });
});
