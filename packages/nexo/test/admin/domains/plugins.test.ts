/**
 * `nexo/admin/plugins/*` over a real daemon running the loopback channel plugin: doctor reports
 * every plugin with its state, pid and tools, restart really replaces the process (new pid, the old one
 * gone, the channel answering again) and reports how long the previous one had been up. Each is
 * its own grant.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isGone } from "../../fixtures/processes.js";
import {
  assertDenied,
  type DaemonAdmin,
  daemonAdmin,
  errorOf,
  resultOf,
} from "../../helpers/admin-daemon.js";
import { EXAMPLE_PLUGINS } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

const AGENTS = `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
`;

interface DoctorEntry {
  id: string;
  state: string;
  pid?: number;
  started_at_ms?: number;
  tools: string[];
}

describe("admin plugins/*", () => {
  let admin: DaemonAdmin;
  before(async () => {
    admin = await daemonAdmin(
      {
        "agents.yaml": AGENTS,
        "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n  - dir: ${join(EXAMPLE_PLUGINS, "demo-tools")}\n`,
      },
      ["plugin_doctor", "plugin_restart"],
    );
  });
  after(() => admin?.stop());

  it("are refused without their grant", async () => {
    assertDenied(
      admin,
      await admin.viewer("nexo/admin/plugins/doctor", {}),
      "nexo/admin/plugins/doctor",
      "plugin_doctor",
    );
    assertDenied(
      admin,
      await admin.viewer("nexo/admin/plugins/restart", { plugin_id: "loopback" }),
      "nexo/admin/plugins/restart",
      "plugin_restart",
    );
  });

  it("doctor: every plugin with its state, pid, start and tools", async () => {
    const answer = resultOf<{
      report: { plugins: (DoctorEntry & { last_error?: unknown })[] };
      generated_at_ms: number;
    }>(await admin.ops("nexo/admin/plugins/doctor", {}));
    assert.ok(Math.abs(answer.generated_at_ms - Date.now()) < 60_000);
    const [loopback, demo] = answer.report.plugins;
    assert.equal(loopback?.state, "running");
    assert.equal(typeof loopback?.pid, "number");
    assert.ok((loopback?.started_at_ms ?? 0) <= Date.now());
    assert.equal(demo?.id, "demo");
    assert.equal(demo?.state, "running");
    assert.ok(demo?.tools.includes("demo_weather"));
  });

  it("restart: a new process, the old one gone, the uptime of the old one, the channel answering", async () => {
    const before = resultOf<{ report: { plugins: DoctorEntry[] } }>(
      await admin.ops("nexo/admin/plugins/doctor", {}),
    ).report.plugins[0];
    const answer = resultOf<{
      plugin_id: string;
      previous_uptime_ms: number;
      restarted_at_ms: number;
      new_pid: number;
    }>(await admin.ops("nexo/admin/plugins/restart", { plugin_id: "loopback" }));
    assert.equal(answer.plugin_id, "loopback");
    assert.ok(before?.pid !== undefined && before.started_at_ms !== undefined);
    assert.notEqual(answer.new_pid, before.pid);
    assert.ok(isGone(before.pid), "the previous process is gone");
    assert.ok(answer.previous_uptime_ms > 0);
    assert.ok(answer.previous_uptime_ms <= answer.restarted_at_ms - before.started_at_ms + 1);
    assert.match(await say(await endpoint(admin.env.stateDir), "alice", "hello"), /demo model/i);
  });

  it("restart: an unknown plugin or missing id is -32602", async () => {
    errorOf(await admin.ops("nexo/admin/plugins/restart", { plugin_id: "nope" }), -32602);
    errorOf(await admin.ops("nexo/admin/plugins/restart", {}), -32602);
  });
});
