/**
 * `nexo plugin check` and `nexo plugin call` as a plugin author runs them: a real CLI process
 * (the plugin commands on their own, see fixtures/plugin-cli.ts) against real plugin processes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { PluginCheckReport } from "../../../src/extensions/plugins/check.js";
import { pluginDir } from "../../fixtures/plugins/harness.js";

const ENTRY = fileURLToPath(new URL("../../fixtures/plugin-cli.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../../../..", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function nexo(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@nexo/source", "--import", "tsx", ENTRY, ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH, NEXO_LOG: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const kitchen = pluginDir("kitchen");

describe("nexo plugin check", () => {
  it("reports each step for a working plugin and exits 0", async () => {
    const run = await nexo("plugin", "check", kitchen);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ok\s+manifest\s+.*nexo-plugin\.toml \(kitchen 0\.1\.0\)$/m);
    assert.match(
      run.stdout,
      /^ok\s+handshake\s+server_version kitchen-0\.1\.0, ready in \d+ ms \(pid \d+, not sandboxed\)$/m,
    );
    assert.match(run.stdout, /^ok\s+tools\s+10 of 11 declared tools advertised: kitchen_echo,/m);
    assert.match(run.stdout, /^WARN\s+tools\s+tool "kitchen_unlisted" is declared .* -33401$/m);
    assert.match(run.stdout, /^ok\s+shutdown\s+acknowledged; exited after \d+ ms$/m);
    assert.match(run.stdout, /plugin check: passed \(1 warning\)$/m);
  });

  it("prints the same report as JSON", async () => {
    const run = await nexo("plugin", "check", join(kitchen, "nexo-plugin.toml"), "--json");
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout) as PluginCheckReport;
    assert.equal(report.ok, true);
    assert.equal(report.plugin?.id, "kitchen");
    assert.equal(report.plugin?.serverVersion, "kitchen-0.1.0");
    assert.equal(report.plugin?.sandboxed, false);
    assert.ok(
      report.plugin?.tools.some((tool) => tool.name === "kitchen_echo" && tool.description === "Echoes text"),
    );
    assert.deepEqual(
      report.steps.map((step) => `${step.step}:${step.status}`),
      ["manifest:ok", "handshake:ok", "tools:ok", "tools:warn", "shutdown:ok", "stdout:ok"],
    );
  });

  it("warns about a tool without an input_schema and fails one that spells it inputSchema (issue 14.5)", async () => {
    const none = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_SCHEMA=none");
    assert.equal(none.code, 0, none.stdout);
    assert.match(
      none.stdout,
      /^WARN\s+tools\s+tool "kitchen_echo" advertises no input_schema, so its arguments are not validated$/m,
    );
    const camel = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_SCHEMA=camel");
    assert.equal(camel.code, 1, camel.stdout);
    assert.match(
      camel.stdout,
      /tool "kitchen_echo" spells its schema "inputSchema"; the contract's key is "input_schema"/,
    );
    assert.match(camel.stdout, /plugin check: FAILED$/m);
  });

  it("fails a tool schema ajv refuses, which the daemon would only meet at the tool's first call", async () => {
    const run = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_SCHEMA=dangling-ref");
    assert.equal(run.code, 1, run.stdout);
    assert.match(
      run.stdout,
      /^FAIL\s+tools\s+tool "kitchen_echo" has an input_schema ajv refuses, so every call to it would be refused: can't resolve reference #\/definitions\/nowhere/m,
    );
    assert.match(run.stdout, /^plugin check: FAILED/m);
  });

  it("reports stray stdout lines as a warning of their own (issue 14.5)", async () => {
    const clean = await nexo("plugin", "check", kitchen);
    assert.match(clean.stdout, /^ok\s+stdout\s+only JSON-RPC frames$/m);
    const noisy = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_STDOUT_NOISE=1");
    assert.equal(noisy.code, 0, noisy.stdout + noisy.stderr);
    assert.match(
      noisy.stdout,
      /^WARN\s+stdout\s+2 lines were not JSON: stdout carries the protocol only; write logs to stderr$/m,
    );
    // The report is for people: the CLI's own JSON log lines do not end up in it.
    assert.doesNotMatch(noisy.stdout + noisy.stderr, /"level":\d+/);
  });

  it("fails on an invalid manifest, naming the file, line and key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nexo-cli-broken-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "nexo-plugin.toml"), '[plugin]\nid = "x"\nversion = "1"\n');
    const run = await nexo("plugin", "check", dir);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL\s+manifest\s+.*nexo-plugin\.toml:1:2: plugin\.name: missing/m);
    assert.match(run.stdout, /^\s+.*nexo-plugin\.toml:3:1: plugin\.version: must be a semantic version/m);
    assert.match(run.stdout, /plugin check: FAILED$/m);
  });

  it("fails the handshake of a plugin that claims another id", async () => {
    const run = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_ID=slack", "--json");
    assert.equal(run.code, 1);
    const report = JSON.parse(run.stdout) as PluginCheckReport;
    assert.deepEqual(report.steps.at(-1), {
      step: "handshake",
      status: "fail",
      detail:
        'identity mismatch: the manifest declares plugin "kitchen" but the child answered initialize as "slack"; refusing to load it',
      code: "plugin_identity_mismatch",
    });
  });

  it("shows the plugin's last stderr lines when it dies during the handshake", async () => {
    const run = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_INIT=crash");
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL\s+handshake\s+plugin:kitchen: exited with code 1; respawn is disabled$/m);
    assert.match(run.stdout, /last stderr lines of the plugin:\n {2}kitchen: KITCHEN_API_KEY is not set/);
    const json = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_INIT=crash", "--json");
    const report = JSON.parse(json.stdout) as PluginCheckReport;
    assert.equal(report.steps.at(-1)?.code, "plugin_failed");
    assert.deepEqual(report.stderrTail, ["kitchen: KITCHEN_API_KEY is not set"]);
  });

  it("warns about a plugin that must be killed after acknowledging shutdown, and fails a shutdown error", async () => {
    const lingering = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_SHUTDOWN=linger");
    assert.equal(lingering.code, 0);
    assert.match(
      lingering.stdout,
      /^WARN\s+shutdown\s+acknowledged, but the process did not exit within 1 s and was killed/m,
    );
    const failing = await nexo("plugin", "check", kitchen, "--env", "FIXTURE_SHUTDOWN=error");
    assert.equal(failing.code, 1);
    assert.match(
      failing.stdout,
      /^FAIL\s+shutdown\s+the plugin's shutdown handler failed: -32000: could not flush$/m,
    );
  });
});

describe("nexo plugin call", () => {
  it("prints a tool's text result", async () => {
    const run = await nexo("plugin", "call", kitchen, "kitchen_echo", '{"text":"hi"}', "--agent", "ana");
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "echo: hi (agent ana, plugin kitchen)\n");
  });

  it("refuses arguments the tool's schema rejects, with -33402 and the offending fields", async () => {
    const run = await nexo("plugin", "call", kitchen, "kitchen_echo", '{"text":7}');
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^error -33402 \(ToolArgumentInvalidError\): invalid argument: kitchen_echo: \/text must be string$/m,
    );
    assert.match(run.stderr, /^data: {"details":\[{"path":"\/text","message":"must be string"}\]}$/m);
  });

  it("prints the plugin's typed error with its code and data", async () => {
    const run = await nexo(
      "plugin",
      "call",
      kitchen,
      "kitchen_fail",
      '{"code":-33404,"message":"busy","data":{"retry_after_ms":1500}}',
      "--json",
    );
    assert.equal(run.code, 1);
    assert.deepEqual(JSON.parse(run.stderr), {
      error: { code: -33404, message: "busy", data: { retry_after_ms: 1500 } },
    });
  });

  it("answers -33401 for a tool the plugin does not have, and exits 2 on arguments that are not JSON", async () => {
    const missing = await nexo("plugin", "call", pluginDir("minimal"), "minimal_nothing");
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^error -33401 \(ToolNotFoundError\): tool not found: plugin "minimal" has no tool "minimal_nothing"$/m,
    );
    const notJson = await nexo("plugin", "call", kitchen, "kitchen_echo", "{text:");
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /the arguments are not JSON/);
  });
});
