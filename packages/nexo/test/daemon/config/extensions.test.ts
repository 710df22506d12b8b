/**
 * extensions.yaml in the config directory: the microapps read with their executable and
 * plugin.toml, the file closed like the others (a typo is an error at its line, with a
 * suggestion), an unusable `path` reported at that key, a broken plugin.toml at its own line, and
 * the secrets a microapp stored in the state dir usable as `${NAME}`.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import type { ConfigIssue } from "../../../src/config/index.js";
import { inspectDaemonConfig, loadDaemonConfig } from "../../../src/daemon/config/index.js";

function configDir(files: Record<string, string>, executables: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-extensions-config-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  for (const name of executables) chmodSync(join(dir, name), 0o755);
  return dir;
}

function lines(dir: string, issues: readonly ConfigIssue[]): string[] {
  return issues.map(
    (issue) => `${issue.file?.slice(dir.length + 1)}:${issue.line}: ${issue.keyPath}: ${issue.message}`,
  );
}

const AGENTS = "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n";
const SCRIPT = "#!/bin/sh\nexit 0\n";

describe("extensions.yaml", () => {
  it("reads each microapp: its entry, its executable and its plugin.toml", async () => {
    const dir = configDir(
      {
        "agents.yaml": AGENTS,
        "daemon.yaml": "state_dir: state\n",
        "extensions.yaml": `extensions:
  entries:
    agent-creator:
      path: apps/creator/main.sh
      capabilities_grant: [agents_crud]
      timeout_secs: 5
      config: { greeting: hi }
    bare:
      path: apps/bare/run.sh
`,
        "apps/creator/main.sh": SCRIPT,
        "apps/creator/plugin.toml":
          '[plugin]\nid = "agent-creator"\nversion = "0.1.0"\n\n[capabilities.admin]\nrequired = ["agents_crud"]\n',
        "apps/bare/run.sh": SCRIPT,
      },
      ["apps/creator/main.sh", "apps/bare/run.sh"],
    );
    const config = await loadDaemonConfig(dir, { env: {} });
    assert.deepEqual(
      config.microapps.map((m) => m.id),
      ["agent-creator", "bare"],
    );
    const [creator, bare] = config.microapps;
    assert.equal(creator?.executable, join(dir, "apps/creator/main.sh"));
    assert.equal(creator?.entry.timeout_secs, 5);
    assert.deepEqual(creator?.entry.config, { greeting: "hi" });
    assert.deepEqual(creator?.manifest.capabilities.admin?.required, ["agents_crud"]);
    assert.equal(bare?.manifestFile, undefined, "plugin.toml is optional");
    assert.deepEqual(bare?.entry.capabilities_grant, []);
    assert.ok(config.files.includes(join(dir, "extensions.yaml")));
  });

  it("is closed like the other files: a misspelt key is an error at its line, with a suggestion", async () => {
    const dir = configDir(
      {
        "agents.yaml": AGENTS,
        "extensions.yaml":
          "extensions:\n  entries:\n    typo:\n      path: apps/ok/main.sh\n      capabilities_grants: [agents_crud]\n",
        "apps/ok/main.sh": SCRIPT,
      },
      ["apps/ok/main.sh"],
    );
    const report = await inspectDaemonConfig(dir, { env: {} });
    assert.deepEqual(lines(dir, report.issues), [
      'extensions.yaml:5: extensions.entries.typo.capabilities_grants: unknown key "capabilities_grants" (did you mean "capabilities_grant"?)',
    ]);
  });

  it("reports an unusable path at its key and a broken plugin.toml at its own lines", async () => {
    const dir = configDir(
      {
        "agents.yaml": AGENTS,
        "extensions.yaml": `extensions:
  entries:
    gone:
      path: apps/nowhere/main.sh
    flat:
      path: apps/flat/main.sh
    broken:
      path: apps/broken/main.sh
`,
        "apps/flat/main.sh": SCRIPT,
        "apps/broken/main.sh": SCRIPT,
        "apps/broken/plugin.toml": '[plugin]\nid = "someone-else"\n\n[capabilities.http_server]\nport = 0\n',
      },
      ["apps/broken/main.sh"],
    );
    const report = await inspectDaemonConfig(dir, { env: {} });
    assert.equal(report.config, undefined);
    const found = lines(dir, report.issues);
    const expected = [
      /^apps\/broken\/plugin\.toml:2: plugin\.id: "someone-else" is not the id this microapp is configured under in extensions\.yaml \("broken"\)$/,
      /^apps\/broken\/plugin\.toml:5: capabilities\.http_server\.port: /,
      /^extensions\.yaml:4: extensions\.entries\.gone\.path: microapp gone: the executable does not exist/,
      /^extensions\.yaml:6: extensions\.entries\.flat\.path: microapp flat: the executable is not executable/,
    ];
    assert.equal(found.length, expected.length, found.join("\n"));
    for (const [index, pattern] of expected.entries()) assert.match(found[index] ?? "", pattern);
  });

  it("secrets a microapp stored in the state dir resolve ${NAME}, over the environment", async () => {
    const dir = configDir({
      "agents.yaml": AGENTS,
      "daemon.yaml": "state_dir: state\n",
      "llm.yaml": "providers:\n  anthropic:\n    type: anthropic\n    api_key: ${STORED_API_KEY}\n",
      "state/secrets/STORED_API_KEY.txt": "sk-ant-from-the-secret-file\n",
    });
    const config = await loadDaemonConfig(dir, { env: { STORED_API_KEY: "from-env" } });
    assert.equal(config.llm.providers.anthropic?.api_key, "sk-ant-from-the-secret-file");
  });
});
