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

  test("an unknown command is a usage error (exit 2) with a hint", async () => {
    const r = await runCli(["frobnicate"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command 'frobnicate'/);
    assert.match(r.stderr, /\(run nexo --help for usage\)/);
  });

  test("an unknown option is named as such, even when a required option is missing too (issue 14.10)", async () => {
    const r = await runCli(["start", "--confg", "examples/quickstart"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /unknown option '--confg'/);
    assert.doesNotMatch(r.stderr, /required option/);
    assert.match(r.stderr, /\(run nexo start --help for usage\)/);
  });

  test("usage errors point at the misused subcommand's help and exit 2", async () => {
    const missing = await runCli(["plugin", "check"]);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /missing required argument 'plugin'\n\(run nexo plugin check --help for usage\)/,
    );
    const badEnv = await runCli(["plugin", "call", "x", "t", "--env", "novalue"]);
    assert.equal(badEnv.code, 2);
    assert.match(badEnv.stderr, /expected KEY=VALUE, got "novalue"/);
    const noConfig = await runCli(["start"]);
    assert.equal(noConfig.code, 2);
    assert.match(noConfig.stderr, /required option '--config <dir>' not specified/);
    const group = await runCli(["config"]);
    assert.equal(group.code, 2);
  });

  test("help shows no '(default: {})' noise", async () => {
    for (const command of [["plugin", "check"], ["plugin", "call"], ["start"], ["agent"], ["app-server"]]) {
      const r = await runCli([...command, "--help"]);
      assert.equal(r.code, 0, command.join(" "));
      assert.doesNotMatch(r.stdout, /\(default: (\{\}|\[\])\)/, command.join(" "));
    }
  });
});

describe("nexo doctor", () => {
  test("--json reports every check, and passes on this machine", async () => {
    const r = await runCli(["doctor", "--json"]);
    const report = JSON.parse(r.stdout) as { passed: boolean; checks: Array<{ id: string; status: string }> };
    assert.equal(r.code, 0, r.stdout);
    assert.equal(report.passed, true);
    // The tests run inside the clone, so the contributor's check is there too.
    assert.deepEqual(report.checks.map((c) => c.id).sort(), [
      "bwrap",
      "nats-server",
      "node",
      "sqlite",
      "test-deps",
    ]);
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

  test("inside a clone it names what npm test needs and the command that installs it (issue 14.7)", async () => {
    const r = await runCli(["doctor", "--json"], { env: { ...process.env, PATH: "/nonexistent" } });
    const report = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string; detail: string }> };
    const deps = report.checks.find((c) => c.id === "test-deps")!;
    assert.equal(deps.status, "warn");
    assert.match(deps.detail, /missing nats-server \(broker tests/);
    assert.match(deps.detail, /apt-get install -y --no-install-recommends nats-server bubblewrap/);
    const present = await runCli(["doctor", "--json"]);
    const ok = (JSON.parse(present.stdout) as { checks: Array<{ id: string; status: string }> }).checks;
    assert.equal(ok.find((c) => c.id === "test-deps")?.status, "ok");
  });

  test("outside a clone the contributor's check is not offered", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "nexo-doctor-outside-"));
    const r = await runCli(["doctor", "--json"], { cwd: elsewhere });
    const report = JSON.parse(r.stdout) as { checks: Array<{ id: string }> };
    assert.equal(
      report.checks.some((c) => c.id === "test-deps"),
      false,
    );
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
