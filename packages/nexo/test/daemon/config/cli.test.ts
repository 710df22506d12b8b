/**
 * `nexo config validate` as an operator runs it (a real CLI process, see fixtures/config-cli.ts),
 * and `nexo doctor --config`'s check, which reads the directory the same way.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { ConfigIssue } from "../../../src/config/index.js";
import type { ConfigWarning } from "../../../src/daemon/config/index.js";
import { configDirCheck } from "../../../src/doctor/config-check.js";

const ENTRY = fileURLToPath(new URL("../../fixtures/config-cli.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../../../..", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function nexo(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@nexo/source", "--import", "tsx", ENTRY, ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH, NEXO_LOG: "silent", ...env },
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

function configDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-config-cli-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const VALID = {
  "agents.yaml": `agents:
  - id: ana
    model: { provider: anthropic, model: claude-sonnet-5 }
  - id: bob
    active: false
    model: { provider: scripted, model: echo }
`,
  "llm.yaml": "providers:\n  anthropic:\n    type: anthropic\n    api_key: ${CLI_TEST_KEY}\n",
  "notes.yaml": "todo: add telegram\n",
};

const BROKEN = {
  "agents.yaml": "agents:\n  - id: ana\n    modle: { provider: scripted, model: echo }\n",
  "daemon.yaml": "http:\n  bind: 0.0.0.0:7780\n",
};

describe("nexo config validate", () => {
  it("prints warnings and a summary for a valid directory and exits 0", async () => {
    const dir = configDir(VALID);
    const run = await nexo(["config", "validate", dir], { CLI_TEST_KEY: "sk-test" });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(
      run.stdout,
      [
        `warning: ${join(dir, "notes.yaml")}: not a file nexo reads, ignored (known: agents.yaml, llm.yaml, broker.yaml, plugins.yaml, mcp.yaml, memory.yaml, tenants.yaml, daemon.yaml, appserver.yaml, extensions.yaml)`,
        "",
        `config ${dir}: valid (2 files read; 2 agents (1 active), 0 plugins, providers anthropic, scripted; broker local; http 127.0.0.1:7780)`,
        "",
      ].join("\n"),
    );
  });

  it("lists every problem as file:line:col: key: message and exits 1", async () => {
    const dir = configDir(BROKEN);
    const run = await nexo(["config", "validate", dir]);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(
      run.stdout,
      [
        `${join(dir, "agents.yaml")}:2:5: agents[0].model: missing (expected object)`,
        `${join(dir, "agents.yaml")}:3:5: agents[0].modle: unknown key "modle" (did you mean "model"?)`,
        `${join(dir, "daemon.yaml")}:1:1: http.token: binding to 0.0.0.0:7780 (not loopback) requires a token, e.g. token: \${NEXO_HTTP_TOKEN}`,
        "",
        `config ${dir}: 3 problems, not usable`,
        "",
      ].join("\n"),
    );
  });

  it("takes ${VAR} from its own environment", async () => {
    const dir = configDir(VALID);
    const run = await nexo(["config", "validate", dir]);
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      /llm\.yaml:4:14: providers\.anthropic\.api_key: environment variable CLI_TEST_KEY is not set \(used as \$\{CLI_TEST_KEY\}\)$/m,
    );
  });

  it("prints the same report as JSON", async () => {
    const good = await nexo(["config", "validate", configDir(VALID), "--json"], { CLI_TEST_KEY: "sk-test" });
    assert.equal(good.code, 0, good.stderr);
    const ok = JSON.parse(good.stdout) as {
      ok: boolean;
      files: string[];
      warnings: ConfigWarning[];
      summary: string;
    };
    assert.equal(ok.ok, true);
    assert.equal(ok.files.length, 2);
    assert.equal(ok.warnings.length, 1);
    assert.match(ok.summary, /^2 files read; 2 agents \(1 active\)/);

    const dir = configDir(BROKEN);
    const bad = await nexo(["config", "validate", dir, "--json"]);
    assert.equal(bad.code, 1, bad.stderr);
    const report = JSON.parse(bad.stdout) as { ok: boolean; issues: ConfigIssue[]; summary?: string };
    assert.equal(report.ok, false);
    assert.equal(report.summary, undefined);
    assert.deepEqual(report.issues[1], {
      code: "schema",
      message: 'unknown key "modle" (did you mean "model"?)',
      path: ["agents", 0, "modle"],
      keyPath: "agents[0].modle",
      file: join(dir, "agents.yaml"),
      line: 3,
      column: 5,
    });
  });

  it("fails on a directory that does not exist", async () => {
    const run = await nexo(["config", "validate", "/nonexistent/nexo-config"]);
    assert.equal(run.code, 1);
    assert.equal(
      run.stdout,
      "/nonexistent/nexo-config: no such directory\n\nconfig /nonexistent/nexo-config: 1 problem, not usable\n",
    );
  });
});

describe("nexo doctor --config", () => {
  it("is ok with a summary, yellow with warnings, red with the problems listed", async () => {
    const unknown = await configDirCheck(configDir({ "agents.yaml": VALID["agents.yaml"] }), {}).run();
    assert.equal(unknown.status, "fail");
    assert.match(
      unknown.detail,
      /^\/.*\/agents\.yaml:3:14: agents\[0\]\.model\.provider: unknown provider "anthropic" \(a global agent can use: scripted\)$/,
    );

    const warned = await configDirCheck(configDir(VALID), { CLI_TEST_KEY: "k" }).run();
    assert.equal(warned.status, "warn");
    assert.match(warned.detail, /^2 files read; 2 agents \(1 active\)/);
    assert.match(warned.detail, /\nwarning: .*notes\.yaml: not a file nexo reads/);

    const dir = configDir({ "agents.yaml": VALID["agents.yaml"], "llm.yaml": VALID["llm.yaml"] });
    const clean = await configDirCheck(dir, { CLI_TEST_KEY: "k" }).run();
    assert.equal(clean.status, "ok");
    assert.match(
      clean.detail,
      /^2 files read; 2 agents \(1 active\), 0 plugins, providers anthropic, scripted; broker local; http 127\.0\.0\.1:7780$/,
    );

    const broken = await configDirCheck(configDir(BROKEN), {}).run();
    assert.equal(broken.status, "fail");
    assert.equal(broken.detail.split("\n").length, 3);
    assert.match(broken.detail, /agents\.yaml:3:5: agents\[0\]\.modle: unknown key "modle"/);
  });
});
