/**
 * appserver.yaml read with the rest of the directory, as `nexo start` and `nexo config validate`
 * read it: a closed schema (a typo is named with the key it probably meant, at its line), the
 * daemon's WebSocket-only rule, a token required off loopback (from the file or
 * NEXO_APPSERVER_TOKEN), and the agent that answers threads checked against agents.yaml.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { inspectDaemonConfig } from "../../../src/daemon/config/index.js";

const TOKEN = "appserver-token-0123456789";
const ONE_AGENT = "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n";
const TWO_AGENTS = `${ONE_AGENT}  - id: bo\n    model: { provider: scripted, model: nexo-scripted-demo }\n`;

function configDir(appserver: string, agents = ONE_AGENT): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-appserver-config-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "agents.yaml"), agents);
  writeFileSync(join(dir, "appserver.yaml"), appserver);
  return dir;
}

async function inspect(appserver: string, options: { agents?: string; env?: NodeJS.ProcessEnv } = {}) {
  return inspectDaemonConfig(configDir(appserver, options.agents), { env: options.env ?? {} });
}

describe("appserver.yaml in the daemon's config directory", () => {
  it("a listen address is served by the only agent, with the token and approval timeout given", async () => {
    const report = await inspect(`listen: ws://127.0.0.1:9100\ntoken: \${T}\napproval_timeout_s: 30\n`, {
      env: { T: TOKEN },
    });
    assert.deepEqual(report.issues, []);
    assert.deepEqual(report.config?.appserver, {
      websocket: { host: "127.0.0.1", port: 9100, token: TOKEN },
      agent: "ana",
      approvalTimeoutMs: 30_000,
    });
    assert.ok(report.files.some((file) => file.endsWith("appserver.yaml")));
  });

  it("without listen nothing is served; the token may come from NEXO_APPSERVER_TOKEN", async () => {
    assert.equal((await inspect("approval_timeout_s: 10\n")).config?.appserver, undefined);
    const report = await inspect("listen: ws://0.0.0.0:9100\n", { env: { NEXO_APPSERVER_TOKEN: TOKEN } });
    assert.deepEqual(report.config?.appserver?.websocket, { host: "0.0.0.0", port: 9100, token: TOKEN });
  });

  it("an unknown key is named with the one it probably meant, at its line", async () => {
    const report = await inspect("listen: ws://127.0.0.1:9100\nlisten_tokn: abc\n");
    assert.equal(report.config, undefined);
    const [issue] = report.issues;
    assert.ok(issue?.file?.endsWith("appserver.yaml"));
    assert.equal(issue?.line, 2);
    assert.match(issue?.message ?? "", /unknown key "listen_tokn"/);
  });

  it("refuses a non-loopback listen without a token, stdio, wss and an unknown or unnamed agent", async () => {
    const cases: Array<[string, RegExp, number, string?]> = [
      ["listen: ws://0.0.0.0:9100\n", /token is required/, 1],
      ["listen: stdio://\n", /the daemon has no stdio client/, 1],
      ["listen: ws+stdio://127.0.0.1:9100\n", /the daemon has no stdio client/, 1],
      ["listen: wss://127.0.0.1:9100\n", /TLS-terminating proxy/, 1],
      ["listen: ws://127.0.0.1:9100\ntoken: short\n", /at least 16 characters/, 2],
      ["listen: ws://127.0.0.1:9100\nagent: nobody\n", /unknown agent "nobody" \(agents.yaml has: ana\)/, 2],
      ["listen: ws://127.0.0.1:9100\n", /has 2 agents: name the one that answers threads/, 1, TWO_AGENTS],
    ];
    for (const [text, problem, line, agents] of cases) {
      const report = await inspect(text, agents === undefined ? {} : { agents });
      assert.equal(report.config, undefined, text);
      assert.equal(report.issues.length, 1, `${text}: ${JSON.stringify(report.issues)}`);
      assert.match(report.issues[0]?.message ?? "", problem, text);
      assert.equal(report.issues[0]?.line, line, text);
    }
  });
});
