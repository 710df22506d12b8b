/**
 * `nexo start` gives memory back once it is idle after start-up (daemon/idle-trim.ts): its debug
 * line reports V8's resident heap before and after the memory-reducing collection, and
 * NEXO_IDLE_TRIM=off keeps it from running.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { test } from "node:test";
import { CLI_PATH } from "../helpers/cli.js";
import { demoToolsConfigDir } from "../helpers/demo-config.js";

const TRIM_LINE = /^.*"msg":"idle: gave memory back".*$/m;

/** Starts the daemon, returns its stderr `settleMs` after the ready line, and stops it. */
async function idleDaemon(env: Record<string, string>, settleMs: number): Promise<string> {
  const dir = demoToolsConfigDir("nexo-start-idle-trim-");
  const child = spawn(process.execPath, [CLI_PATH, "start", "--config", dir], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: dir, NEXO_LOG: "debug", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line:\n${stderr}`)), 60_000);
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        const ready = stderr.includes('"msg":"nexo daemon ready');
        stderr += chunk;
        if (!ready && stderr.includes('"msg":"nexo daemon ready')) {
          clearTimeout(timer);
          setTimeout(() => resolve(stderr), settleMs);
        }
      });
      child.once("close", () => reject(new Error(`the daemon exited:\n${stderr}`)));
    });
  } finally {
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const code = await exited;
    clearTimeout(killer);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, `exit ${code}: ${stderr}`);
  }
}

test("nexo start runs one memory-reducing collection once idle after start-up, and it shrinks the heap", async () => {
  const stderr = await idleDaemon({}, 4000);
  const lines = stderr.match(new RegExp(TRIM_LINE.source, "gm")) ?? [];
  assert.equal(lines.length, 1, `trim lines:\n${lines.join("\n")}\n${stderr}`);
  const { trim } = JSON.parse(lines[0]!) as {
    trim: { heapBeforeMB: number; heapAfterMB: number; liveMB: number; newSpaceMB: number; cpuMs: number };
  };
  // Start-up leaves the young generation's pages resident (2 MB) and old-space pages part empty.
  assert.ok(
    trim.heapBeforeMB - trim.heapAfterMB >= 1,
    `the heap gave back too little: ${JSON.stringify(trim)}`,
  );
  assert.ok(trim.newSpaceMB < 1, `the young generation stayed resident: ${JSON.stringify(trim)}`);
});

test("NEXO_IDLE_TRIM=off: no trim", async () => {
  const stderr = await idleDaemon({ NEXO_IDLE_TRIM: "off" }, 4000);
  assert.doesNotMatch(stderr, TRIM_LINE);
});
