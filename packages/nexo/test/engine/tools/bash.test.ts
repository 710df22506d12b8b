import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createBashTool } from "../../../src/engine/tools/bash.js";
import { ToolRegistry } from "../../../src/engine/tools/registry.js";
import type { ToolContext } from "../../../src/engine/types.js";

let ws: string;
const strays: number[] = [];
before(() => {
  ws = realpathSync(mkdtempSync(join(tmpdir(), "nexo-bash-")));
});
after(() => {
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  rmSync(ws, { recursive: true, force: true });
});

function ctx(signal = new AbortController().signal): ToolContext {
  return { signal, sessionId: "s", agentId: "a", callId: "c", workspace: ws, unconfined: false };
}

/** Running means present and not a zombie (orphans may never be reaped where PID 1 does not reap). */
function isRunning(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
  return state !== "Z" && state !== "X";
}

async function pidFromFile(name: string): Promise<number> {
  const path = join(ws, name);
  for (let i = 0; i < 200 && !existsSync(path); i++) await sleep(10);
  for (let i = 0; i < 200; i++) {
    const pid = Number(readFileSync(path, "utf8").trim());
    if (pid > 0) {
      strays.push(pid);
      return pid;
    }
    await sleep(10);
  }
  throw new Error(`no pid in ${name}`);
}

const registry = new ToolRegistry();
registry.register(createBashTool({ killGraceMs: 300, outputCapBytes: 1000, maxTimeoutMs: 60_000 }));
const bash = (args: Record<string, unknown>, signal?: AbortSignal) =>
  registry.invoke("Bash", args, ctx(signal));

describe("Bash", () => {
  it("runs in the workspace and returns stdout, stderr and the exit code", async () => {
    const ok = await bash({ command: "pwd; sleep 0.1; echo to-stderr >&2" });
    assert.equal(ok.output, `${ws}\nto-stderr\n[exit code 0]`);
    assert.equal(ok.isError, false);
    assert.equal(ok.metadata?.exit_code, 0);

    const failed = await bash({ command: "echo partial; exit 3" });
    assert.equal(failed.output, "partial\n[exit code 3]");
    assert.equal(failed.isError, true);
    assert.equal(failed.metadata?.exit_code, 3);
  });

  it("streams its output as it runs (whole characters) and types its result", async () => {
    const pieces: string[] = [];
    const out = await registry.invoke(
      "Bash",
      { command: "printf 'caf\\303'; sleep 0.1; printf '\\251 ok\\n'; echo err >&2; exit 2" },
      { ...ctx(), onOutput: (text) => pieces.push(text) },
    );
    assert.equal(pieces.join(""), "café ok\nerr\n");
    assert.ok(
      pieces.every((piece) => !piece.includes("\ufffd")),
      JSON.stringify(pieces),
    );
    assert.deepEqual(out.detail, {
      kind: "command",
      command: "printf 'caf\\303'; sleep 0.1; printf '\\251 ok\\n'; echo err >&2; exit 2",
      cwd: ws,
      exitCode: 2,
      signal: null,
      timedOut: false,
      cancelled: false,
      outputBytes: 13,
      truncatedBytes: 0,
    });
  });

  it("says when there was no output, and gives the command an empty stdin", async () => {
    const output = await bash({ command: "cat" });
    assert.equal(output.output, "(no output)\n[exit code 0]");
  });

  it("keeps the head and tail of long output and says how much was cut", async () => {
    const output = await bash({ command: "seq 1 20000" });
    let full = "";
    for (let n = 1; n <= 20000; n++) full += `${n}\n`;
    const total = Buffer.byteLength(full);
    const [head, marker, ...rest] = output.output.split(/\n(?=\[… output truncated)|(?<=bytes cut …\])\n/);
    assert.ok(head !== undefined && marker !== undefined);
    assert.ok(full.startsWith(head), "the head is the start of the output");
    assert.equal(head.length, 500);
    const tail = rest.join("\n");
    assert.ok(tail.endsWith("19999\n20000\n[exit code 0]"));
    const cut = total - 1000;
    assert.equal(marker, `[… output truncated: ${cut} of ${total} bytes cut …]`);
    assert.equal(output.metadata?.truncated_bytes, cut);
    assert.equal(output.metadata?.output_bytes, total);
  });

  it("kills the whole process group on timeout, grandchildren included", async () => {
    const started = Date.now();
    const output = await bash({ command: "sleep 1000 & echo $! > timeout.pid; wait", timeout_ms: 300 });
    const grandchild = await pidFromFile("timeout.pid");
    assert.equal(output.isError, true);
    assert.equal(output.metadata?.timed_out, true);
    assert.match(output.output, /\[timed out after 300 ms; the command and its processes were killed\]$/);
    assert.equal(isRunning(grandchild), false, `grandchild ${grandchild} survived the timeout`);
    assert.ok(Date.now() - started < 5000);
  });

  it("kills the whole process group when the call is aborted", async () => {
    const controller = new AbortController();
    const pending = bash({ command: "sleep 1000 & echo $! > abort.pid; wait" }, controller.signal);
    const grandchild = await pidFromFile("abort.pid");
    assert.equal(isRunning(grandchild), true);
    controller.abort();
    const output = await pending;
    assert.equal(output.isError, true);
    assert.equal(output.metadata?.cancelled, true);
    assert.match(output.output, /\[cancelled; the command and its processes were killed\]$/);
    assert.equal(isRunning(grandchild), false, `grandchild ${grandchild} survived the abort`);
  });

  it("escalates to SIGKILL for processes that ignore SIGTERM", async () => {
    const controller = new AbortController();
    const pending = bash(
      { command: "trap '' TERM; sleep 1000 & echo $! > stubborn.pid; wait" },
      controller.signal,
    );
    const grandchild = await pidFromFile("stubborn.pid");
    const started = Date.now();
    controller.abort();
    const output = await pending;
    assert.equal(output.metadata?.cancelled, true);
    assert.equal(isRunning(grandchild), false, `grandchild ${grandchild} survived SIGKILL`);
    assert.ok(Date.now() - started >= 250, "SIGKILL came only after the grace period");
  });

  it("stops what the command left running in the background when it ends", async () => {
    const started = Date.now();
    const output = await bash({ command: "sleep 1000 & echo $! > leftover.pid; echo done" });
    const leftover = await pidFromFile("leftover.pid");
    assert.equal(output.output, "done\n[exit code 0]");
    assert.equal(isRunning(leftover), false, `leftover ${leftover} kept running`);
    assert.ok(Date.now() - started < 3000);
  });

  it("does not wait forever for a process that left the group but holds the output pipe", async () => {
    const started = Date.now();
    const output = await bash({ command: "setsid sleep 30 & echo $! > escaped.pid; echo bye" });
    await pidFromFile("escaped.pid");
    assert.match(output.output, /^bye\n\[exit code 0\]$/);
    assert.ok(Date.now() - started < 3000);
  });

  it("does not start when the call is already cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const output = await bash({ command: "touch ran.txt" }, controller.signal);
    assert.equal(output.isError, true);
    assert.equal(existsSync(join(ws, "ran.txt")), false);
  });

  it("validates the timeout against the maximum", async () => {
    const output = await bash({ command: "true", timeout_ms: 60_001 });
    assert.equal(output.output, "Invalid arguments for Bash: /timeout_ms must be <= 60000");
  });

  it("reports a shell that cannot start", async () => {
    const broken = new ToolRegistry();
    broken.register(createBashTool({ shell: join(ws, "no-such-shell") }));
    const output = await broken.invoke("Bash", { command: "true" }, ctx());
    assert.equal(output.isError, true);
    assert.match(output.output, /^Could not start .*no-such-shell: spawn .* ENOENT/);
  });

  it("describes calls with the first line of the command", () => {
    const tool = createBashTool();
    assert.equal(tool.describe?.({ command: "npm test" }), "Run: npm test");
    assert.equal(tool.describe?.({ command: "cd x\nmake" }), "Run: cd x …");
    assert.equal(tool.describe?.({ command: "x".repeat(100) }), `Run: ${"x".repeat(79)}…`);
  });
});

it("commands do not see the daemon's secrets by default", async () => {
  const { withoutSecrets } = await import("../../../src/secrets/index.js");
  const env = withoutSecrets({
    PATH: "/usr/bin",
    ANTHROPIC_API_KEY: "sk-ant-x",
    OPENAI_API_KEY: "sk-x",
    GITHUB_TOKEN: "ghp",
    DB_PASSWORD: "pw",
    AWS_SECRET_ACCESS_KEY: "s",
    HOME: "/root",
  });
  assert.deepEqual(Object.keys(env).sort(), ["HOME", "PATH"]);
});
