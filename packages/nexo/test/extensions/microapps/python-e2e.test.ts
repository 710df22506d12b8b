/**
 * Issue 13's "done when", end to end: the Python microapp written from docs/microapps.md
 * (examples/microapps/python-notes, standard library only) under a real `nexo start` (the built
 * CLI), driven by the SDK's microapp test daemon — an agent on the scripted model calling its tools
 * through the daemon's AppServer. It loads, is called by the agent, manages agents through the
 * admin RPC (agents/list, agents/upsert: agents.yaml written and reloaded), is refused what it was
 * not granted (-32004, and the denied row is in `nexo microapp audit tail`), and survives a crash
 * (SIGKILL: the supervisor restarts it, the next call works, its state is intact). Like the other
 * Python tests of the repository, it needs python3 on PATH.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { startTestDaemon, type TestDaemon } from "nexo-plugin-sdk/microapp/testing";
import { CLI_PATH } from "../../helpers/cli.js";

const REPO = fileURLToPath(new URL("../../../../../", import.meta.url));
const MAIN = fileURLToPath(
  new URL("../../../../../examples/microapps/python-notes/main.py", import.meta.url),
);

describe("a Python microapp from docs/microapps.md, in a real daemon", () => {
  let daemon: TestDaemon;
  before(async () => {
    daemon = await startTestDaemon({
      nexo: CLI_PATH,
      // skills_crud is declared optional by its plugin.toml and not granted here.
      microapps: {
        "python-notes": { path: MAIN, grants: ["agents_crud"], config: { blocked_words: ["password"] } },
      },
    });
  });
  after(async () => {
    await daemon?.stop();
  });

  test("loads, and the agent calls its tools through the daemon", async () => {
    const first = daemon.microapp("python-notes");
    assert.equal(first?.incarnation, 1, "the daemon started it at boot");
    const added = await daemon.callTool("python_notes_add", { text: "buy milk" });
    assert.equal(added.success, true, added.text);
    assert.deepEqual(JSON.parse(added.text), { saved: "buy milk", count: 1 });
    const listed = await daemon.callTool("python_notes_list");
    assert.deepEqual(JSON.parse(listed.text), { notes: ["buy milk"] });
  });

  test("manages agents through the admin RPC: agents/upsert writes agents.yaml, agents/list sees it", async () => {
    const created = await daemon.callTool("python_notes_create_agent", { id: "carlos" });
    assert.equal(created.success, true, created.text);
    assert.deepEqual(JSON.parse(created.text), {
      created: "carlos",
      model: { provider: "scripted", model: "scripted" },
    });
    assert.match(readFileSync(join(daemon.configDir, "agents.yaml"), "utf8"), /id: carlos/);
    const agents = await daemon.callTool("python_notes_agents");
    assert.deepEqual(JSON.parse(agents.text).agents.sort(), ["carlos", "tester"]);
    const audit = await daemon.auditTail({ microappId: "python-notes", result: "ok" });
    assert.deepEqual(
      audit.entries.map((row) => row.method),
      ["nexo/admin/agents/list", "nexo/admin/agents/upsert"],
    );
  });

  test("is refused what it was not granted: -32004, and the refusal is in the audit tail", async () => {
    const published = await daemon.callTool("python_notes_publish", { text: "be brief" });
    assert.equal(published.success, false);
    // The microapp read the capability from the -32004 error's data.
    assert.match(published.text, /not allowed: the operator has not granted skills_crud/);
    const denied = await daemon.auditTail({ microappId: "python-notes", result: "denied" });
    assert.equal(denied.entries.length, 1, JSON.stringify(denied));
    assert.equal(denied.entries[0]?.method, "nexo/admin/skills/upsert");
    assert.equal(denied.entries[0]?.capability, "skills_crud");
    assert.equal(denied.entries[0]?.error_code, -32004);
  });

  test("survives a crash: killed, restarted by the supervisor, the next call works with its state", async () => {
    const before = daemon.microapp("python-notes")!;
    process.kill(before.pid, "SIGKILL");
    const restarted = await daemon.waitForMicroapp("python-notes", { after: before.incarnation });
    assert.notEqual(restarted.pid, before.pid);
    const listed = await daemon.callTool("python_notes_list");
    assert.equal(listed.success, true, listed.text);
    assert.deepEqual(JSON.parse(listed.text), { notes: ["buy milk"] }, "state_dir kept its notes");
    const supervisor = daemon.log().filter((line) => line.extension === "microapp:python-notes");
    assert.ok(
      supervisor.some((line) => line.signal === "SIGKILL" && /unexpectedly/.test(String(line.msg))),
      "the supervisor saw the crash",
    );
    assert.ok(
      supervisor.some((line) => /^restarting after/.test(String(line.msg))),
      "and restarted it",
    );
  });
});

describe("the doc's own Python program (docs/microapps.md), in a real daemon", () => {
  test("copied from the doc, it loads and the agent calls its tool", async () => {
    const doc = readFileSync(join(REPO, "docs/microapps.md"), "utf8");
    const python = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
    const toml = /```toml\n(\[plugin\]\nid = "hello"[\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(python && toml, "the doc holds the program and its plugin.toml");
    const dir = mkdtempSync(join(tmpdir(), "nexo-doc-microapp-"));
    try {
      writeFileSync(join(dir, "main.py"), python, { mode: 0o755 });
      writeFileSync(join(dir, "plugin.toml"), toml);
      const daemon = await startTestDaemon({
        nexo: CLI_PATH,
        microapps: { hello: { path: join(dir, "main.py"), grants: ["audit_read"] } },
      });
      try {
        const call = await daemon.callTool("hello_greet", { name: "ana" });
        assert.equal(call.success, true, call.text);
        assert.deepEqual(JSON.parse(call.text), { greeting: "hello, ana" });
      } finally {
        await daemon.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
