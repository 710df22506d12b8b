/**
 * Hot reload against a real daemon: edits to the config directory are picked up by the watcher,
 * validated as a whole and applied; an invalid edit keeps the running config and says why.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadDaemonConfig } from "../../src/daemon/config/index.js";
import { Daemon } from "../../src/daemon/daemon.js";
import type { ReloadOutcome } from "../../src/daemon/reload.js";
import { specFromConfig } from "../../src/daemon/spec.js";
import { createLogger } from "../../src/log.js";
import { SLOW_MACHINE_INIT_MS } from "../helpers/daemon-dir.js";
import { endpoint, say } from "../helpers/loopback.js";
import { waitFor } from "../helpers/wait.js";

const examples = fileURLToPath(new URL("../../../../examples/plugins/", import.meta.url));

function agentsYaml(agents: Array<{ id: string; prompt: string }>): string {
  return `agents:\n${agents
    .map(
      (a) => `  - id: ${a.id}
    model: { provider: scripted, model: nexo-scripted-demo }
    system_prompt: ${JSON.stringify(a.prompt)}
    inbound_bindings: [{ plugin: loopback${a.id === "ana" ? "" : `, instance: ${a.id}`} }]
    approval: { allow: [info, demo_weather] }
`,
    )
    .join("")}`;
}

function pluginsYaml(names: string[]): string {
  return `plugins:\n${names.map((n) => `  - dir: ${join(examples, n)}\n`).join("")}`;
}

test("hot reload: valid changes apply without a restart, invalid ones keep the running config", async () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-reload-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-reload-state-"));
  writeFileSync(join(dir, "agents.yaml"), agentsYaml([{ id: "ana", prompt: "first prompt" }]));
  writeFileSync(join(dir, "plugins.yaml"), pluginsYaml(["loopback-channel"]));
  writeFileSync(join(dir, "daemon.yaml"), `state_dir: ${stateDir}\nhttp: { enabled: false }\n`);
  const env = { PATH: process.env.PATH, NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS };
  const logger = createLogger({ level: "silent" });
  const spec = specFromConfig(await loadDaemonConfig(dir, { env }), env, logger);
  const daemon = await Daemon.start({ ...spec, source: { dir, env, debounceMs: 100 } });
  const reloader = daemon.reloader!;
  const outcome = async (n: number): Promise<ReloadOutcome> =>
    waitFor(`reload #${n}`, () => reloader.history[n - 1]);
  try {
    const url = await endpoint(stateDir);
    assert.match(await say(url, "alice", "hello"), /demo model/i);

    // 1. A valid change: a new plugin, a changed agent.
    writeFileSync(join(dir, "plugins.yaml"), pluginsYaml(["loopback-channel", "demo-tools"]));
    writeFileSync(join(dir, "agents.yaml"), agentsYaml([{ id: "ana", prompt: "second prompt" }]));
    const first = await outcome(1);
    assert.ok(first.ok, !first.ok ? first.error : "");
    const report = first.ok ? first.report : undefined;
    assert.deepEqual(report?.agents.changed, ["ana"]);
    assert.deepEqual(report?.plugins.added, [join(examples, "demo-tools")]);
    await waitFor("the demo plugin to run", () =>
      daemon.plugins.status().find((p) => p.id === "demo" && p.state === "running") ? true : undefined,
    );
    assert.match(
      await say(url, "alice", "weather in Oslo"),
      /Oslo/,
      "the new plugin's tool is offered right away",
    );

    // 2. An invalid change: rejected with file, line and key; the running config keeps working.
    writeFileSync(join(dir, "agents.yaml"), "agents:\n  - id: ana\n    modle: {}\n");
    const second = await waitFor("the rejected reload", () => reloader.history.find((o) => !o.ok));
    assert.ok(!second.ok);
    assert.match(second.ok ? "" : second.error, /agents\.yaml:3:\d+: agents\[0\]\.modle/);
    assert.match(await say(url, "bob", "hello"), /demo model/i, "still routed under the previous config");

    // 3. Remove the plugin and the agent: the plugin process stops, messages are no longer routed.
    const demoPid = daemon.plugins.status().find((p) => p.id === "demo")!.pid!;
    const seen = reloader.history.length;
    writeFileSync(join(dir, "plugins.yaml"), pluginsYaml(["loopback-channel"]));
    writeFileSync(join(dir, "agents.yaml"), "agents: []\n");
    await waitFor("the last reload", () =>
      reloader.history.slice(seen).find((o) => o.ok && o.report.agents.removed.length > 0),
    );
    await waitFor("the demo plugin to stop", () =>
      daemon.plugins.status().some((p) => p.id === "demo") ? undefined : true,
    );
    assert.throws(() => process.kill(demoPid, 0), "the removed plugin's process is gone");
    const unboundBefore = daemon.router.stats().unbound;
    await fetch(`${url}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ from: "carol", text: "anyone?" }),
    });
    await waitFor("the unbound count", () =>
      daemon.router.stats().unbound > unboundBefore ? true : undefined,
    );
  } finally {
    await daemon.stop("test over");
  }
});

test("a change that the reload already running picked up is still in the caller's report", async () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-reload-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-reload-state-"));
  const agent = (id: string) =>
    `  - id: ${id}\n    model: { provider: scripted, model: nexo-scripted-demo }\n`;
  writeFileSync(join(dir, "agents.yaml"), `agents:\n${agent("ana")}${agent("bob")}`);
  writeFileSync(join(dir, "daemon.yaml"), `state_dir: ${stateDir}\nhttp: { enabled: false }\n`);
  const env = { PATH: process.env.PATH };
  const spec = specFromConfig(await loadDaemonConfig(dir, { env }), env, createLogger({ level: "silent" }));
  const daemon = await Daemon.start({ ...spec, source: { dir, env, watch: false } });
  try {
    const reloader = daemon.reloader!;
    // A reload (the watcher's, for an earlier edit) starts; it reads the directory only after
    // the edit below has landed, so it is the one that applies the edit.
    const running = reloader.reloadNow();
    writeFileSync(join(dir, "agents.yaml"), `agents:\n${agent("ana")}`);
    const mine = await reloader.reloadNow();
    const earlier = await running;
    assert.ok(earlier.ok && mine.ok);
    assert.deepEqual(earlier.report.agents.removed, ["bob"], "the running reload applied the edit");
    assert.deepEqual(mine.report.agents.removed, ["bob"], "and the caller is told");
    assert.deepEqual(daemon.summary().agents, ["ana"]);
  } finally {
    await daemon.stop("test over");
  }
});
