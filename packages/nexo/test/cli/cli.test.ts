import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runCli } from "../helpers/cli.js";

const version = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

describe("nexo CLI", () => {
  test("--version prints the package version", async () => {
    const r = await runCli(["--version"]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), version);
  });

  test("--help lists the commands", async () => {
    const r = await runCli(["--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage: nexo/);
    assert.match(r.stdout, /doctor/);
  });

  test("an unknown command fails with a hint", async () => {
    const r = await runCli(["frobnicate"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown command 'frobnicate'/);
    assert.match(r.stderr, /nexo --help/);
  });
});

describe("nexo doctor", () => {
  test("--json reports every check, and passes on this machine", async () => {
    const r = await runCli(["doctor", "--json"]);
    const report = JSON.parse(r.stdout) as { passed: boolean; checks: Array<{ id: string; status: string }> };
    assert.equal(r.code, 0, r.stdout);
    assert.equal(report.passed, true);
    assert.deepEqual(report.checks.map((c) => c.id).sort(), ["bwrap", "nats-server", "node", "sqlite"]);
    const byId = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
    assert.equal(byId.node, "ok");
    assert.equal(byId.sqlite, "ok");
  });

  test("missing optional programs are warnings, not failures", async () => {
    const r = await runCli(["doctor", "--json"], { env: { ...process.env, PATH: "/nonexistent" } });
    const report = JSON.parse(r.stdout) as {
      passed: boolean;
      checks: Array<{ id: string; status: string; detail: string }>;
    };
    assert.equal(r.code, 0);
    const bwrap = report.checks.find((c) => c.id === "bwrap")!;
    assert.equal(bwrap.status, "warn");
    assert.match(bwrap.detail, /apt-get install bubblewrap/);
  });

  test("the human report is a table with a verdict", async () => {
    const r = await runCli(["doctor"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^ok\s+Node\.js >= 20\.6\s+v\d+/m);
    assert.match(r.stdout, /doctor: all required checks passed/);
  });

  test("--config validates every file of a directory and names file, line and column", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nexo-doctor-"));
    writeFileSync(
      join(dir, "agents.yaml"),
      "agents:\n  - id: ana\n    model:\n      provider: ${NEXO_TEST_MODEL:-scripted}\n      model: echo\n",
    );
    const good = await runCli(["doctor", "--json", "--config", dir]);
    assert.equal(good.code, 0, good.stdout);
    writeFileSync(
      join(dir, "llm.yaml"),
      "providers:\n  main:\n    key: ${NEXO_DOCTOR_MISSING_VAR}\n  bad: [unclosed\n",
    );
    const bad = await runCli(["doctor", "--json", "--config", dir]);
    assert.equal(bad.code, 1);
    const report = JSON.parse(bad.stdout) as {
      passed: boolean;
      checks: Array<{ id: string; status: string; detail: string }>;
    };
    assert.equal(report.passed, false);
    const config = report.checks.find((c) => c.id === "config")!;
    assert.equal(config.status, "fail");
    assert.match(config.detail, /llm\.yaml:\d+:\d+/);
  });

  test("--config on a missing directory fails", async () => {
    const r = await runCli(["doctor", "--config", "/nonexistent/nexo-config"]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAIL\s+config directory/);
  });
});
