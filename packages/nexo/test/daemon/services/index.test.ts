/**
 * services.reload() against a real daemon: a valid change on disk is swapped in and reported; an
 * invalid one keeps the running config and comes back as InvalidConfigError with every problem
 * located. A daemon started without a config directory says so instead of guessing.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Daemon } from "../../../src/daemon/daemon.js";
import { InvalidConfigError, UnavailableError } from "../../../src/daemon/services/index.js";
import { createLogger } from "../../../src/log.js";
import { type DaemonDir, startFromDir } from "../../helpers/daemon-dir.js";

const agent = (id: string) => `  - id: ${id}\n    model: { provider: scripted, model: nexo-scripted-demo }\n`;

describe("services.reload", () => {
  let env: DaemonDir;
  before(async () => {
    env = await startFromDir({ "agents.yaml": `agents:\n${agent("ana")}` });
  });
  after(() => env.daemon.stop("test over"));

  it("swaps a valid change in and reports it", async () => {
    env.write("agents.yaml", `agents:\n${agent("ana")}${agent("bob")}`);
    const { report, reloadedAt } = await env.daemon.services.reload();
    assert.deepEqual(report.agents, { added: ["bob"], removed: [], changed: [] });
    assert.ok(reloadedAt instanceof Date);
    assert.deepEqual(env.daemon.summary().agents, ["ana", "bob"]);
  });

  it("keeps the running config on an invalid change and lists every problem with file, line and key", async () => {
    env.write("agents.yaml", `agents:\n${agent("ana")}  - id: cleo\n    modle: {}\n    max_turns: 0\n`);
    await assert.rejects(env.daemon.services.reload(), (e: unknown) => {
      assert.ok(e instanceof InvalidConfigError);
      assert.deepEqual(
        e.issues.map((i) => [i.line, i.keyPath]),
        [
          [4, "agents[1].model"],
          [5, "agents[1].modle"],
          [6, "agents[1].max_turns"],
        ],
      );
      assert.ok(e.issues.every((i) => i.file?.endsWith("agents.yaml")));
      return true;
    });
    assert.deepEqual(env.daemon.summary().agents, ["ana", "bob"], "the running config stays");
  });
});

describe("services without a config directory", () => {
  it("every config operation is UnavailableError; the runtime ones still work", async () => {
    const daemon = await Daemon.start({
      stateDir: mkdtempSync(join(tmpdir(), "nexo-services-nodir-")),
      agents: [],
      llm: { providers: {}, tenants: {} },
      broker: { type: "local" },
      plugins: { dirs: [], settings: {} },
      env: { PATH: process.env.PATH },
      logger: createLogger({ level: "silent" }),
    });
    try {
      assert.equal(daemon.reloader, undefined);
      await assert.rejects(daemon.services.agents.list(), UnavailableError);
      await assert.rejects(daemon.services.reload(), UnavailableError);
      await assert.rejects(daemon.services.config.reload(), UnavailableError);
      await assert.rejects(
        daemon.services.mcp.upsert("x", { transport: "stdio", command: "true" }),
        UnavailableError,
      );
      assert.deepEqual(daemon.services.plugins.list(), []);
      assert.deepEqual(daemon.services.channels.list(), []);
    } finally {
      await daemon.stop("test over");
    }
  });
});
