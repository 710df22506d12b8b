/**
 * The secrets of a daemon started with the real `nexo start`, attacked the ways issue 10 found:
 * the Bash tool and an unsandboxed plugin read the daemon's /proc/<pid>/environ, and a provider's
 * error echoes the key it was sent. The key must reach the provider (the mock LLM records the
 * header) and nothing else: not the environ, not the logs, not a file in the state dir.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { CLI_PATH } from "../helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../helpers/daemon-dir.js";
import { JsonStreamClient } from "../helpers/jsonstream-client.js";
import { endpoint, say } from "../helpers/loopback.js";
import { waitFor } from "../helpers/wait.js";

const SECRET = "sk-ant-api03-nexoTestKey9f3kQ92LmZp0Xr8sT4vW1yBc6dE5gH2j";
const examples = fileURLToPath(new URL("../../../../examples/plugins/", import.meta.url));
const probePlugin = fileURLToPath(new URL("../fixtures/plugins/environ-probe", import.meta.url));

/** Every file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stats = statSync(path);
    if (stats.isDirectory()) found.push(...filesContaining(path, needle));
    else if (stats.isFile() && readFileSync(path).includes(needle)) found.push(path);
  }
  return found;
}

describe("nexo start keeps its secrets", () => {
  let mock: MockLlmServer;
  let daemon: ChildProcess;
  let stateDir: string;
  let stderr = "";

  before(async () => {
    mock = new MockLlmServer({
      script: [
        {
          tool_calls: [
            {
              name: "Bash",
              input: {
                command: "tr '\\0' '\\n' < /proc/$PPID/environ; echo \"daemon pid $PPID\"",
              },
            },
          ],
        },
        { text: "I looked." },
        // A proxy that echoes the key it was sent in its error text.
        { status: 401, message: `invalid x-api-key: ${SECRET} (Authorization: Bearer ${SECRET})` },
      ],
    });
    const baseUrl = await mock.start();
    const config = mkdtempSync(join(tmpdir(), "nexo-secrets-cfg-"));
    stateDir = mkdtempSync(join(tmpdir(), "nexo-secrets-state-"));
    const workspace = join(stateDir, "ws");
    mkdirSync(workspace);
    writeFileSync(
      join(config, "llm.yaml"),
      `providers:\n  anthropic:\n    type: anthropic\n    base_url: ${baseUrl}\n    api_key: \${ANTHROPIC_API_KEY}\n    retry: { max_retries: 0 }\n`,
    );
    writeFileSync(
      join(config, "agents.yaml"),
      `agents:
  - id: probe
    model: { provider: anthropic, model: claude-test }
    inbound_bindings: [{ plugin: loopback }]
    workspace: ${workspace}
    approval: { mode: yolo }
`,
    );
    writeFileSync(
      join(config, "plugins.yaml"),
      `plugins:\n  - dir: ${join(examples, "loopback-channel")}\n  - dir: ${probePlugin}\n`,
    );
    writeFileSync(join(config, "daemon.yaml"), `state_dir: ${stateDir}\nhttp: { enabled: false }\n`);
    daemon = spawn(process.execPath, [CLI_PATH, "start", "--config", config], {
      env: {
        PATH: process.env.PATH,
        HOME: stateDir,
        NEXO_LOG: "info",
        NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS,
        ANTHROPIC_API_KEY: SECRET,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    daemon.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
  });

  after(async () => {
    if (daemon.exitCode === null) {
      const exited = once(daemon, "exit");
      daemon.kill("SIGTERM");
      const timer = setTimeout(() => daemon.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await mock.close();
  });

  it("the Bash tool reads the daemon's /proc/<pid>/environ and does not find the key", async () => {
    // The example channel plugin starts through tsx, which takes a while on a loaded machine.
    const endpointFile = join(stateDir, "plugins", "loopback", "endpoint.json");
    await waitFor("the loopback channel", () => (existsSync(endpointFile) ? true : undefined), 60_000);
    const url = await endpoint(stateDir);
    assert.equal(await say(url, "mallory", "show me the environment"), "I looked.");
    const [first, second] = mock.requests().filter((request) => request.path.endsWith("/messages"));
    // The key did reach the provider.
    assert.equal(
      first!.headers["x-api-key"] ?? first!.headers.authorization?.replace(/^Bearer /, ""),
      SECRET,
    );
    // The tool result the model got back: the daemon's environment, without the key.
    const toolResult = JSON.stringify(second!.body);
    assert.match(toolResult, new RegExp(`daemon pid ${daemon.pid}`), "Bash's parent is the daemon");
    assert.match(toolResult, /PATH=/, "the environ was read");
    assert.ok(!toolResult.includes(SECRET), "the Bash tool read the key from the daemon's environ");
    assert.ok(!toolResult.includes("ANTHROPIC_API_KEY"));
  });

  it("an unsandboxed plugin reads /proc/<daemon pid>/environ and does not find the key", async () => {
    const file = join(stateDir, "plugins", "environ_probe", "environ.json");
    const seen = await waitFor("the probe plugin's report", () =>
      existsSync(file)
        ? (JSON.parse(readFileSync(file, "utf8")) as { ppid: number; entries?: string[] })
        : undefined,
    );
    assert.equal(seen.ppid, daemon.pid);
    assert.ok(
      seen.entries?.some((entry) => entry.startsWith("PATH=")),
      JSON.stringify(seen),
    );
    assert.ok(!seen.entries!.some((entry) => entry.includes(SECRET)));
    // And any other process of the same user, reading it now.
    assert.ok(!readFileSync(`/proc/${daemon.pid}/environ`).includes(SECRET));
  });

  it("a provider error echoing the key reaches the log scrubbed; no file holds the key", async () => {
    const url = await endpoint(stateDir);
    const post = await fetch(`${url}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ from: "eve", text: "hello" }),
    });
    assert.equal(post.status, 202);
    const line = await waitFor("the turn error in the log", () =>
      stderr.split("\n").find((l) => l.includes('"turn error"') && l.includes("rejected the credentials")),
    );
    assert.match(line, /\[REDACTED:secret\]/);
    assert.ok(!stderr.includes(SECRET), "the daemon's log holds the key");
    assert.deepEqual(filesContaining(stateDir, SECRET), []);
  });
});

describe("nexo agent --json-stream keeps its secrets", () => {
  const mock = new MockLlmServer();
  before(() => mock.start());
  after(() => mock.close());

  it("Bash cannot read the key from the door's environ; an echoed key is not in the error event", async () => {
    mock.reset([
      { tool_calls: [{ name: "Bash", input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ" } }] },
      { text: "looked" },
      { status: 401, message: `bad key ${SECRET}` },
    ]);
    const workspace = mkdtempSync(join(tmpdir(), "nexo-secrets-js-"));
    const client = new JsonStreamClient(
      ["--provider", "anthropic", "--base-url", mock.url, "--auto-approve", "--workspace", workspace],
      { env: { ANTHROPIC_API_KEY: SECRET } },
    );
    try {
      await client.turn("m1", "show me the environment");
      const toolResult = JSON.stringify(mock.requests()[1]!.body);
      assert.match(toolResult, /PATH=/);
      assert.ok(!toolResult.includes(SECRET), "the Bash tool read the key from the door's environ");
      const events = await client.turn("m2", "hello");
      const error = events.find((event) => event.type === "error");
      assert.ok(error !== undefined, JSON.stringify(events));
      assert.match(JSON.stringify(error), /\[REDACTED:secret\]/);
      assert.ok(!JSON.stringify(client.events).includes(SECRET), "an event carries the key");
      assert.ok(!client.stderr.includes(SECRET), "the log carries the key");
      assert.deepEqual(filesContaining(client.stateDir, SECRET), []);
    } finally {
      client.end();
      await client.exited;
    }
  });
});
