/**
 * Microapps in the real daemon, from a real config directory: extensions.yaml read at boot, a
 * microapp missing a required grant refused while the others and the daemon run, an agent turn
 * (scripted model, loopback channel) calling a microapp tool with the binding it came through, a
 * microapp hook denying a message, the admin RPC served and audited, and hot reloads of
 * agents.yaml (agents/updated) and extensions.yaml (a new grant brings the refused one up).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MICROAPPS_DIR } from "../../fixtures/microapps/harness.js";
import { type DaemonDir, EXAMPLE_PLUGINS, startFromDir } from "../../helpers/daemon-dir.js";
import { endpoint, say } from "../../helpers/loopback.js";

const agents = (extra = "") => `agents:
  - id: ana
    model: { provider: scripted, model: nexo-scripted-demo }
    inbound_bindings: [{ plugin: loopback }]
    approval: { allow: [py_hello_greet, probe_echo] }
${extra}`;

const extensions = (lockedGrants: string) => `extensions:
  entries:
    probe:
      path: ${join(MICROAPPS_DIR, "probe/main.mjs")}
      capabilities_grant: [audit_read, transcripts_subscribe]
    locked:
      path: ${join(MICROAPPS_DIR, "probe/main.mjs")}
      capabilities_grant: [${lockedGrants}]
    py-hello:
      path: ${join(MICROAPPS_DIR, "py-hello/main.py")}
      capabilities_grant: [memory_query]
`;

let run: DaemonDir;
before(async () => {
  run = await startFromDir({
    "agents.yaml": agents(),
    "plugins.yaml": `plugins:\n  - dir: ${join(EXAMPLE_PLUGINS, "loopback-channel")}\n`,
    "extensions.yaml": extensions(""),
  });
});
after(() => run.daemon.stop("test over"));

async function toolOutput(id: string, tool: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const host = run.daemon.microapps.host(id);
  assert.ok(host, `microapp ${id} runs`);
  return (await host.callTool({ tool, args, binding_context: { agent_id: "test" } })).output;
}

describe("microapps in the daemon", () => {
  it("boots the granted microapps and refuses the one missing a required capability; the daemon runs", async () => {
    assert.deepEqual(run.daemon.summary().microapps, [
      { id: "probe", state: "running" },
      { id: "locked", state: "refused" },
      { id: "py-hello", state: "running" },
    ]);
    const locked = run.daemon.microapps.status().find((status) => status.id === "locked");
    assert.match(locked?.lastError?.message ?? "", /requires audit_read/);
  });

  it("an agent turn calls a microapp tool with the binding and the inbound message it came through", async () => {
    const url = await endpoint(run.stateDir);
    const greeting = await say(url, "alice", "py_hello_greet ana");
    assert.match(greeting, /hello, ana/);
    const echoed = await say(url, "alice", "probe_echo hi there");
    const session = run.daemon.store.sessions.list().find((s) => s.contact === "alice");
    assert.ok(session);
    assert.match(echoed, /"agent_id": "ana"/);
    assert.match(echoed, /"channel": "loopback"/);
    assert.match(echoed, /"binding_index": 0/);
    assert.match(echoed, /"kind": "loopback_message"/);
    assert.match(echoed, /"from": "alice"/);
    assert.ok(echoed.includes(`"session_id": "${session.id}"`));
  });

  it("a microapp hook that denies a message blocks it: no turn, nothing in the transcript", async () => {
    const url = await endpoint(run.stateDir);
    const post = await fetch(`${url}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ from: "carol", text: "this is forbidden" }),
    });
    assert.equal(post.status, 202);
    const reply = await say(url, "carol", "good morning");
    assert.doesNotMatch(reply, /forbidden/);
    const session = run.daemon.store.sessions.list().find((s) => s.contact === "carol");
    const texts = run.daemon.store.transcripts
      .entries(session!.id)
      .filter((entry) => entry.role === "user" && entry.content.some((block) => block.type === "text"))
      .map((entry) => JSON.stringify(entry.content));
    assert.equal(texts.length, 1, texts.join("\n"));
    assert.match(texts[0] ?? "", /good morning/);
  });

  it("serves the admin RPC with the daemon's audit log: granted and denied calls both leave a row", async () => {
    const granted = (await toolOutput("probe", "probe_admin", {
      method: "nexo/admin/microapp_audit/tail",
      params: {},
    })) as {
      result?: { entries: unknown[] };
    };
    assert.ok(Array.isArray(granted.result?.entries));
    const denied = (await toolOutput("py-hello", "py_hello_admin", {
      method: "nexo/admin/microapp_audit/tail",
      params: {},
    })) as {
      error?: { code: number };
    };
    assert.equal(denied.error?.code, -32004);
    const rows = run.daemon.store.audit.tail({ limit: 10, method: "nexo/admin/microapp_audit/tail" }).entries;
    assert.deepEqual(
      rows.slice(0, 2).map((row) => [row.microapp_id, row.result]),
      [
        ["py-hello", "denied"],
        ["probe", "ok"],
      ],
    );
  });

  it("an agents.yaml reload sends agents/updated; an extensions.yaml reload applies a new grant", async () => {
    run.write(
      "agents.yaml",
      agents("  - id: bob\n    model: { provider: scripted, model: nexo-scripted-demo }\n"),
    );
    const outcome = await run.daemon.reloader!.reloadNow();
    assert.equal(outcome.ok, true, outcome.ok ? "" : outcome.error);
    let notes: Array<{ method: string; params: unknown }> = [];
    for (let i = 0; i < 50; i++) {
      notes = (await toolOutput("probe", "probe_notes")) as typeof notes;
      if (notes.some((note) => note.method === "agents/updated")) break;
      await sleep(20);
    }
    assert.deepEqual(
      notes.filter((note) => note.method === "agents/updated"),
      [{ method: "agents/updated", params: { agent_ids: ["ana", "bob"] } }],
    );

    run.write("extensions.yaml", extensions("audit_read"));
    const second = await run.daemon.reloader!.reloadNow();
    assert.equal(second.ok, true, second.ok ? "" : second.error);
    assert.deepEqual(second.ok && second.report.microapps, { added: [], removed: [], restarted: ["locked"] });
    assert.equal(run.daemon.microapps.status().find((s) => s.id === "locked")?.state, "running");
  });
});

describe("auth/rotate_token in the daemon", () => {
  it("replaces the health listener's token at once and across a restart", async () => {
    const files = {
      "agents.yaml": agents(),
      "extensions.yaml": `extensions:\n  entries:\n    probe:\n      path: ${join(MICROAPPS_DIR, "probe/main.mjs")}\n      capabilities_grant: [audit_read, auth_rotate]\n`,
    };
    const first = await startFromDir(files);
    const daemonYaml = `state_dir: ${first.stateDir}\nhttp: { bind: "127.0.0.1:0", token: the-initial-operator-token }\n`;
    await first.daemon.stop("restart with a listener");
    const started = await startFromDir({ ...files, "daemon.yaml": daemonYaml });
    let second: DaemonDir | undefined;
    try {
      const health = async (daemon: DaemonDir, token: string) =>
        (
          await fetch(`${daemon.daemon.summary().http}/healthz`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).status;
      assert.equal(await health(started, "the-initial-operator-token"), 200);
      const host = started.daemon.microapps.host("probe")!;
      const reply = await host.callTool({
        tool: "probe_admin",
        args: { method: "nexo/admin/auth/rotate_token", params: { new_token: "the-rotated-operator-token" } },
        binding_context: { agent_id: "t" },
      });
      assert.equal((reply.output as { result?: { ok: boolean } }).result?.ok, true);
      assert.equal(await health(started, "the-initial-operator-token"), 401);
      assert.equal(await health(started, "the-rotated-operator-token"), 200);
      await started.daemon.stop("restart");
      second = await startFromDir({ ...files, "daemon.yaml": daemonYaml });
      assert.equal(
        await health(second, "the-initial-operator-token"),
        401,
        "the rotation survives a restart",
      );
      assert.equal(await health(second, "the-rotated-operator-token"), 200);
    } finally {
      await started.daemon.stop("test over");
      await second?.daemon.stop("test over");
    }
  });
});
