/**
 * `nexo agent --json-stream`'s fast start (cli/agent-fast.ts): `ready` is written before the door
 * loads, byte for byte the line the door writes for the same session (compared against a launch
 * with `--session-id`, which the fast start leaves to the door), the session it announces is the
 * one served and stored, and launches whose start-up could be refused by a cheap check are left to
 * the door so their `error{config_error}` still comes instead of `ready`. A store that cannot be
 * opened is only found by the door: `ready`, then `error{config_error}`, exit 2.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fastAgentLaunch } from "../../src/cli/agent-fast.js";
import { CLI_PATH } from "../helpers/cli.js";

const dirs: string[] = [];
const tempDir = (name: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `nexo-agent-fast-${name}-`));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  lines: string[];
  stderr: string;
}

/** Runs `nexo agent --json-stream ARGS` with `input` on stdin (then closed) to its exit. */
function runAgent(args: string[], env: NodeJS.ProcessEnv, input = ""): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, "agent", "--json-stream", ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NEXO_LOG: "warn", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, lines: stdout.split("\n").filter(Boolean), stderr });
    });
    child.stdin.end(input);
  });
}

describe("which launches start fast", () => {
  let workspace: string;
  let state: string;
  before(() => {
    workspace = tempDir("ws");
    state = tempDir("state");
  });

  test("a plain launch, with the session's flags, starts fast", () => {
    const env = { NEXO_STATE_DIR: state };
    const plain = fastAgentLaunch(["--json-stream", "--workspace", workspace], env);
    assert.ok(plain);
    assert.equal(plain.flags.agentId, "default");
    assert.match(plain.flags.sessionId, /^[0-9a-f-]{36}$/);
    const full = fastAgentLaunch(
      [
        "--json-stream",
        "--provider=anthropic",
        "--model",
        "m",
        "--max-tokens",
        "100",
        "--max-turns=3",
        "--auto-approve",
        "--workspace",
        workspace,
        "--base-url",
        "http://127.0.0.1:9/v1",
      ],
      { ...env, ANTHROPIC_API_KEY: "k" },
    );
    assert.ok(full);
    assert.equal(full.flags.maxTokens, 100);
    assert.equal(full.flags.maxTurns, 3);
    const ready = JSON.parse(full.ready) as { capabilities: Record<string, unknown> };
    assert.equal(ready.capabilities.current_mode, "yolo");
    assert.equal(ready.capabilities.current_model, "m");
  });

  test("anything a cheap check refuses or commander reads its own way is left to the door", () => {
    const env = { NEXO_STATE_DIR: state };
    for (const [args, extraEnv] of [
      [[], {}],
      [["--json-stream", "--resume", "latest"], {}],
      [["--json-stream", "--session-id", "s1"], {}],
      [["--json-stream", "--provider", "bogus"], {}],
      [["--json-stream", "--provider", "anthropic"], {}],
      [["--json-stream", "--provider", "openai"], {}],
      [["--json-stream", "--max-tokens", "0"], {}],
      [["--json-stream", "--max-turns", "1e3"], {}],
      [["--json-stream", "--workspace", join(workspace, "missing")], {}],
      [["--json-stream", "--provider", "openai", "--base-url", "ftp://x"], {}],
      [["--json-stream"], { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "not a url" }],
      [["--json-stream", "--system-prompt", "-x"], {}],
      [["--json-stream", "--help"], {}],
      [["--json-stream", "--log-format", "json"], {}],
      [["--json-stream", "extra"], {}],
    ] as Array<[string[], NodeJS.ProcessEnv]>) {
      assert.equal(fastAgentLaunch(args, { ...env, ...extraEnv }), undefined, args.join(" "));
    }
  });
});

describe("nexo agent --json-stream writing ready fast", () => {
  test("the fast ready is the door's ready for the same session, byte for byte", async () => {
    const workspace = tempDir("ws");
    for (const [args, env] of [
      [["--workspace", workspace], {}],
      [
        ["--workspace", workspace, "--provider", "anthropic", "--model", "claude-x", "--auto-approve"],
        { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
      ],
    ] as Array<[string[], NodeJS.ProcessEnv]>) {
      const fast = await runAgent(args, { ...env, NEXO_STATE_DIR: tempDir("state") });
      assert.equal(fast.code, 0, fast.stderr);
      assert.equal(fast.lines.length, 1, fast.lines.join("\n"));
      const { session_id: id } = JSON.parse(fast.lines[0]!) as { session_id: string };
      // The same id given as --session-id: the door writes this ready itself.
      const door = await runAgent([...args, "--session-id", id], {
        ...env,
        NEXO_STATE_DIR: tempDir("state"),
      });
      assert.equal(door.code, 0, door.stderr);
      assert.deepEqual(door.lines, fast.lines);
    }
  });

  test("the announced session is the one served and stored: it answers, then resumes", async () => {
    const workspace = tempDir("ws");
    const env = { NEXO_STATE_DIR: tempDir("state") };
    const message = `${JSON.stringify({ type: "message", msg_id: "m1", content: "hello" })}\n`;
    const first = await runAgent(["--workspace", workspace], env, message);
    assert.equal(first.code, 0, first.stderr);
    const events = first.lines.map((l) => JSON.parse(l) as { type: string; session_id?: string });
    assert.equal(events[0]!.type, "ready");
    assert.equal(events.at(-1)!.type, "stream_end", first.lines.join("\n"));
    const resumed = await runAgent(["--workspace", workspace, "--resume", events[0]!.session_id!], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.lines[0]!) as { session_id: string }).session_id, events[0]!.session_id);
  });

  test("a store that cannot be opened: ready, then error{config_error}, exit 2", async () => {
    const state = tempDir("state");
    mkdirSync(join(state, "nexo.db")); // a directory where the database file should be
    const run = await runAgent(["--workspace", tempDir("ws")], { NEXO_STATE_DIR: state });
    assert.equal(run.code, 2, run.stderr);
    const events = run.lines.map(
      (l) => JSON.parse(l) as { type: string; error?: { code: string; message: string } },
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ["ready", "error"],
    );
    assert.equal(events[1]!.error?.code, "config_error");
    assert.match(events[1]!.error?.message ?? "", /cannot open the session store/);
  });
});
