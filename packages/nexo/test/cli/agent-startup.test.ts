/**
 * What `nexo agent --json-stream` loads before its `ready` line (the start-up time a UI waits
 * for). The fast start (cli/agent-fast.ts) writes `ready` before the door loads: the bundle's
 * static imports from main.js to it are read, and none may bring zod, pino, commander, the engine
 * or the store. When the door writes `ready` itself (here: a launch with `--session-id`, which the
 * fast start leaves to it), the bundled chunks are recorded by a module hook, and none may carry what only a later
 * turn or another command uses — YAML/TOML parsing (config files this door never reads), ajv
 * (built-in tool schemas compile on their first call) and the diff library (the first file change). The same process then runs a tool call
 * whose arguments break the schema and one whose arguments fit it: the schema compiled late, from
 * the bundle, still refuses and accepts as registration would have.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { MockLlmServer } from "@nexo/mock-llm";
import { fastStartSources, NOT_IN_A_FAST_START } from "../helpers/bundle.js";
import { CLI_PATH } from "../helpers/cli.js";

const HOOKS = `export async function load(url, context, next) {
  if (url.startsWith("file:")) (await import("node:fs")).appendFileSync(process.env.NEXO_TEST_LOAD_LOG, url + "\\n");
  return next(url, context);
}`;
const REGISTER = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

test("the fast start writes ready with main.js and its own small chunk only", () => {
  const sources = fastStartSources("agent-fast");
  assert.ok(sources.includes("// packages/nexo/dist/doors/jsonstream/start-up.js"));
  for (const absent of NOT_IN_A_FAST_START) {
    assert.ok(!sources.includes(absent), `${absent} is loaded before the fast ready`);
  }
});

test("nexo agent is ready without YAML, TOML or ajv, and validates a built-in tool's arguments later", async () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-agent-startup-"));
  const log = join(dir, "loaded.txt");
  writeFileSync(join(dir, "notes.txt"), "hello from the notes\n");
  const mock = new MockLlmServer({
    script: [
      { tool_calls: [{ id: "toolu_bad", name: "Read", input: { offset: 0 } }] },
      { tool_calls: [{ id: "toolu_good", name: "Read", input: { file_path: "notes.txt" } }] },
      { text: "Read it." },
    ],
  });
  await mock.start();
  try {
    const child = spawn(
      process.execPath,
      [
        "--import",
        `data:text/javascript,${encodeURIComponent(REGISTER)}`,
        CLI_PATH,
        "agent",
        "--json-stream",
        "--provider",
        "anthropic",
        "--model",
        "claude-test",
        "--workspace",
        dir,
        "--auto-approve",
        "--session-id",
        "agent-startup-session",
      ],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          NEXO_STATE_DIR: join(dir, "state"),
          NEXO_LOG: "warn",
          NEXO_TEST_LOAD_LOG: log,
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: mock.url,
        },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const lines: Array<Record<string, unknown>> = [];
    let loadedAtReady: string[] | undefined;
    let rest = "";
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      rest += d;
      for (let nl = rest.indexOf("\n"); nl !== -1; nl = rest.indexOf("\n")) {
        const line = JSON.parse(rest.slice(0, nl)) as Record<string, unknown>;
        rest = rest.slice(nl + 1);
        lines.push(line);
        if (line.type === "ready") {
          // Read now: what the turn loads is not start-up.
          loadedAtReady = readFileSync(log, "utf8").split("\n").filter(Boolean);
          child.stdin.end(`${JSON.stringify({ type: "message", msg_id: "m1", input: "read the notes" })}\n`);
        }
      }
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 0, `exit ${code}: ${stderr}`);

    assert.ok(loadedAtReady !== undefined, `no ready line: ${JSON.stringify(lines)} ${stderr}`);
    const chunks = loadedAtReady.filter((u) => u.includes("/bundle/")).map((u) => fileURLToPath(u));
    assert.ok(chunks.length > 0, `no bundle chunk recorded: ${loadedAtReady.join(" ")}`);
    const sources = chunks.map((f) => readFileSync(f, "utf8")).join("\n");
    assert.ok(sources.includes("engine/tools/registry.js"), "the tool registry is loaded");
    for (const absent of [
      "node_modules/yaml/",
      "node_modules/smol-toml/",
      "node_modules/ajv/",
      "node_modules/diff/",
    ]) {
      assert.ok(!sources.includes(absent), `${absent} is loaded before ready`);
    }

    const results = lines.filter((l) => l.type === "tool_result");
    assert.deepEqual(
      results.map((r) => [r.call_id, r.status]),
      [
        ["toolu_bad", "error"],
        ["toolu_good", "success"],
      ],
      JSON.stringify(lines),
    );
    assert.match(String(results[0]!.output), /file_path/);
    assert.match(String(results[1]!.output), /hello from the notes/);
  } finally {
    await mock.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
