/**
 * `nexo start` gives memory back once it is idle after start-up (daemon/idle-trim.ts): its debug
 * line reports V8's resident heap before and after the memory-reducing collection, and
 * NEXO_IDLE_TRIM=off keeps it from running.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startDaemonProcess } from "../helpers/daemon-process.js";
import { demoToolsConfigDir } from "../helpers/demo-config.js";

const TRIM_LINE = /^.*"msg":"idle: gave memory back".*$/m;

/** Starts the daemon, returns its stderr `settleMs` after the ready line, and stops it. */
async function idleDaemon(env: Record<string, string>, settleMs: number): Promise<string> {
  const dir = demoToolsConfigDir("nexo-start-idle-trim-");
  try {
    const daemon = await startDaemonProcess({
      config: dir,
      stateDir: join(dir, "state"),
      env: { HOME: dir, NEXO_LOG: "debug", ...env },
    });
    await sleep(settleMs);
    const { code } = await daemon.stop();
    assert.equal(code, 0, `exit ${code}: ${daemon.stderr()}`);
    return daemon.stderr();
  } finally {
    rmSync(dir, { recursive: true, force: true });
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
