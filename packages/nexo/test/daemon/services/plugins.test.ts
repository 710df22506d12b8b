/**
 * services.plugins against a real daemon with real plugin processes: the list carries state,
 * restarts and last error; a restart replaces the process (the old one is gone) and, for a channel
 * plugin, starts its bound channel again so messages flow on.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { NotFoundError } from "../../../src/daemon/services/index.js";
import { isGone } from "../../fixtures/processes.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

describe("services.plugins", () => {
  let env: DaemonDir;
  before(async () => {
    env = await startFromDir({
      "agents.yaml":
        "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n    inbound_bindings: [{ plugin: loopback }]\n",
      "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n  - dir: ${join(EXAMPLE_PLUGINS, "demo-tools")}\n`,
    });
  });
  after(() => env.daemon.stop("test over"));

  it("lists each plugin with its state, restarts and last error", () => {
    const list = env.daemon.services.plugins.list();
    assert.deepEqual(
      list.map((p) => [p.id, p.state, p.restarts, p.lastError]),
      [
        ["loopback", "running", 0, undefined],
        ["demo", "running", 0, undefined],
      ],
    );
    assert.equal(env.daemon.services.plugins.get("demo").source, join(EXAMPLE_PLUGINS, "demo-tools"));
    assert.throws(() => env.daemon.services.plugins.get("nope"), NotFoundError);
  });

  it("restart replaces the process", async () => {
    const result = await env.daemon.services.plugins.restart("demo");
    assert.equal(result.before.state, "running");
    assert.equal(result.after.state, "running");
    assert.ok(result.after.pid !== undefined && result.after.pid !== result.before.pid);
    assert.ok(isGone(result.before.pid!), "the old process is gone");
    assert.ok(result.restartedAt instanceof Date);
    assert.ok(result.after.tools.includes("demo_weather"));
  });

  it("restarting a channel plugin starts its bound channel again", async () => {
    const result = await env.daemon.services.plugins.restart("loopback");
    assert.equal(result.after.state, "running");
    assert.ok(isGone(result.before.pid!));
    assert.match(await say(await endpoint(env.stateDir), "alice", "still there?"), /demo model/i);
  });

  it("an unknown plugin is NotFoundError", async () => {
    await assert.rejects(env.daemon.services.plugins.restart("nope"), (e: unknown) => {
      assert.ok(e instanceof NotFoundError);
      assert.equal(e.subject, "plugin");
      return true;
    });
  });
});
