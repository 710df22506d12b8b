/**
 * A pairing challenge left open when the daemon stops: the admin RPC as `nexo start` composes it
 * (admin/serve.ts) ends it — the loopback plugin is told to cancel it, its expiry timer is
 * cleared — so nothing of it outlives the daemon: no timer in this process, no plugin process.
 */
import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { join } from "node:path";
import { after, it } from "node:test";
import { MICROAPPS_DIR } from "../fixtures/microapps/harness.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../helpers/daemon-dir.js";
import { AGENTS, call, ok } from "../helpers/takeover.js";

/** Every timer this process creates from now on (unref'd ones included), to see which are left. */
const created: Array<{ _idleTimeout: number; _destroyed: boolean }> = [];
createHook({
  init(_id, type, _trigger, resource) {
    if (type === "Timeout") created.push(resource as (typeof created)[number]);
  },
}).enable();
/** The delays of the timers created between `from` and `to` that are still pending. */
const pending = (from: number, to: number) =>
  created.slice(from, to).flatMap((timer) => (timer._destroyed ? [] : [timer._idleTimeout]));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let run: DaemonDir | undefined;
after(() => run?.daemon.stop("test over"));

it("the daemon's stop ends a live pairing challenge: its timer is cleared, no plugin process is left", async () => {
  run = await startFromDir({
    "agents.yaml": AGENTS,
    "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
    "extensions.yaml": `extensions:
  entries:
    ops:
      path: ${join(MICROAPPS_DIR, "probe/main.mjs")}
      capabilities_grant: [audit_read, pairing_initiate]
      config: { daemon_timeout_ms: 60000 }
`,
  });
  const from = created.length;
  const started = ok(
    await call(run, "ops", "nexo/admin/pairing/start", { agent_id: "ana", channel: "loopback" }),
  );
  const challenge = String(started.challenge_id);
  const status = ok(await call(run, "ops", "nexo/admin/pairing/status", { challenge_id: challenge }));
  assert.ok(["pending", "qr_ready"].includes(String(status.state)), JSON.stringify(status));
  const to = created.length;
  assert.ok(
    pending(from, to).some((ms) => ms > 60_000),
    "the challenge's expiry timer is armed",
  );
  const plugin = run.daemon.plugins.status().find((s) => s.id === "loopback");
  assert.ok(plugin?.pid, "the loopback plugin runs");

  await run.daemon.stop("test over");
  run = undefined;

  assert.equal(alive(plugin.pid), false, "the plugin process is gone");
  assert.deepEqual(pending(from, to), [], "timers of the pairing calls left pending (their delays in ms)");
});
