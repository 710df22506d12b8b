/**
 * `nexo microapp check` and `nexo microapp call` as a microapp author runs them: the real `nexo`
 * executable against the Node and Python fixture microapps — passing runs, and each kind of
 * failure reported with a clear line and a non-zero exit.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { MicroappCheckReport } from "../../src/extensions/microapps/check.js";
import { MICROAPPS_DIR } from "../fixtures/microapps/harness.js";
import { runCli } from "../helpers/cli.js";

const REPO = fileURLToPath(new URL("../../../..", import.meta.url));
const PROBE = join(MICROAPPS_DIR, "probe");
const PY = join(MICROAPPS_DIR, "py-hello");
const env = { PATH: process.env.PATH, NEXO_LOG: "silent" };
const nexo = (...args: string[]) => runCli(args, { env, timeoutMs: 60_000 });

function line(stdout: string, step: string): string {
  return stdout.split("\n").find((l) => l.split(/\s+/)[1] === step) ?? "";
}

describe("nexo microapp check", () => {
  it("passes a conforming microapp, Node and Python, step by step", async () => {
    for (const target of [PROBE, PY]) {
      const run = await nexo("microapp", "check", target);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      for (const step of [
        "manifest",
        "handshake",
        "tools",
        "catalogue",
        "hooks",
        "methods",
        "admin",
        "shutdown",
      ])
        assert.match(line(run.stdout, step), /^ok /, `${target}: ${step}`);
      assert.match(run.stdout, /microapp check: passed$/m);
    }
  });

  it("fails an unprefixed tool, naming it", async () => {
    const run = await nexo("microapp", "check", PROBE, "--config", '{"extra_tools":["send_message"]}');
    assert.equal(run.code, 1);
    assert.match(run.stdout, /FAIL\s+tools\s+tool "send_message" is not prefixed "probe_"/);
    assert.match(run.stdout, /microapp check: FAILED/);
  });

  it("warns about a catalogue that changes bytes, and a registered hook answered -32601", async () => {
    const run = await nexo("microapp", "check", PROBE, "--config", '{"unstable":true,"hook_vote":"unknown"}');
    assert.equal(run.code, 0, run.stdout);
    assert.match(line(run.stdout, "catalogue"), /^WARN .*different bytes/);
    assert.match(line(run.stdout, "hooks"), /^WARN .*hooks\/before_message answered -32601/);
    assert.match(run.stdout, /microapp check: passed \(2 warnings\)/);
  });

  it("lists the admin calls the microapp made: granted ok, missing grant a warning, a non-app: id a failure", async () => {
    const granted = await nexo(
      "microapp",
      "check",
      PROBE,
      "--json",
      "--config",
      '{"init_admin":{"method":"nexo/admin/microapp_audit/tail","params":{}}}',
    );
    const report = JSON.parse(granted.stdout) as MicroappCheckReport;
    assert.deepEqual(
      report.steps.filter((s) => s.step === "admin").map((s) => [s.status, s.detail]),
      [["ok", "nexo/admin/microapp_audit/tail: ok"]],
    );
    const denied = await nexo(
      "microapp",
      "check",
      PROBE,
      "--grant",
      "audit_read",
      "--config",
      '{"init_admin":{"method":"nexo/admin/memory/query","params":{"agent_id":"a"}}}',
    );
    assert.equal(denied.code, 0);
    assert.match(line(denied.stdout, "admin"), /^WARN .*nexo\/admin\/memory\/query: denied \(-32004\)/);
    const bad = await nexo(
      "microapp",
      "check",
      PROBE,
      "--config",
      '{"init_admin":{"method":"nexo/admin/microapp_audit/tail","params":{},"id":5}}',
    );
    assert.equal(bad.code, 1);
    assert.match(line(bad.stdout, "admin"), /^FAIL .*its request id does not start with "app:"/);
  });

  it("fails a microapp that does not answer shutdown (killed at the 10 s deadline)", async () => {
    const run = await nexo("microapp", "check", PROBE, "--config", '{"shutdown":"ignore"}');
    assert.equal(run.code, 1);
    assert.match(line(run.stdout, "shutdown"), /^FAIL .*shutdown was not answered within 5 s/);
  });

  it("fails a path that holds no microapp, and a bad plugin.toml", async () => {
    const empty = mkdtempSync(join(tmpdir(), "nexo-microapp-empty-"));
    after(() => rmSync(empty, { recursive: true, force: true }));
    const none = await nexo("microapp", "check", empty);
    assert.equal(none.code, 1);
    assert.match(
      none.stdout,
      /FAIL\s+target\s+.*holds no executable main or main\.<ext>: give the executable's path instead/,
    );
    writeFileSync(join(empty, "main.sh"), "#!/bin/sh\n", { mode: 0o755 });
    writeFileSync(join(empty, "plugin.toml"), "[capabilities.admin]\nrequired = 3\n");
    const bad = await nexo("microapp", "check", empty, "--id", "empty");
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /FAIL\s+manifest\s+.*plugin\.toml:2:1: capabilities\.admin\.required/);
  });
});

describe("the Python microapp of docs/microapps.md", () => {
  it("written from the doc alone, passes the check and answers its tool", async () => {
    const doc = readFileSync(join(REPO, "docs/microapps.md"), "utf8");
    const python = /```python\n([\s\S]*?)```/.exec(doc)?.[1];
    const toml = /```toml\n(\[plugin\]\nid = "hello"[\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(python && toml, "the doc holds the program and its plugin.toml");
    const dir = mkdtempSync(join(tmpdir(), "nexo-doc-microapp-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "main.py"), python, { mode: 0o755 });
    writeFileSync(join(dir, "plugin.toml"), toml);
    const check = await nexo("microapp", "check", dir);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /ok\s+tools\s+1 tool named hello_\*: hello_greet/);
    const call = await nexo("microapp", "call", dir, "hello_greet", '{"name":"ana"}');
    assert.equal(call.code, 0, call.stderr);
    assert.deepEqual(JSON.parse(call.stdout), { greeting: "hello, ana" });
  });
});

describe("nexo microapp call", () => {
  it("prints a tool's output; a tool error and bad arguments fail", async () => {
    const ok = await nexo("microapp", "call", PY, "py_hello_greet", '{"name":"ana"}');
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), { greeting: "hello, ana" });
    const failed = await nexo("microapp", "call", PROBE, "probe_fail");
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /tool error: it failed on purpose/);
    const notJson = await nexo("microapp", "call", PROBE, "probe_echo", "{oops");
    assert.equal(notJson.code, 2);
  });

  it("serves the tool's admin calls like the daemon and reports them", async () => {
    const run = await nexo(
      "microapp",
      "call",
      PROBE,
      "probe_admin",
      '{"method":"nexo/admin/microapp_audit/tail","params":{}}',
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual((JSON.parse(run.stdout) as { result: unknown }).result, {
      entries: [],
      total: 0,
      has_more: false,
    });
    assert.match(run.stderr, /admin call: nexo\/admin\/microapp_audit\/tail → ok/);
  });
});
