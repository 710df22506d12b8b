/**
 * `nexo start` as a user runs it (the built CLI, a real config directory with the loopback channel
 * plugin): "ready" is logged once everything listens, SIGTERM stops it cleanly with exit 0, and a
 * component that cannot start — here the health port, taken by another program — stops what had
 * started and exits 1 naming the component and the fix, instead of logging "ready" and hanging.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_PATH, runCli } from "../helpers/cli.js";
import { SLOW_MACHINE_INIT_MS } from "../helpers/daemon-dir.js";

const loopback = fileURLToPath(new URL("../../../../examples/plugins/loopback-channel", import.meta.url));

function configDir(bind: string): { dir: string; stateDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "nexo-start-cfg-"));
  const stateDir = mkdtempSync(join(tmpdir(), "nexo-start-state-"));
  writeFileSync(
    join(dir, "agents.yaml"),
    "agents:\n  - id: ana\n    model: { provider: scripted, model: nexo-scripted-demo }\n    inbound_bindings: [{ plugin: loopback }]\n",
  );
  writeFileSync(join(dir, "plugins.yaml"), `plugins:\n  - dir: ${loopback}\n`);
  writeFileSync(join(dir, "daemon.yaml"), `state_dir: ${stateDir}\nhttp: { bind: "${bind}" }\n`);
  return { dir, stateDir };
}

const logLines = (stderr: string) =>
  stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg?: string; ready?: { http?: string } });

describe("nexo start", () => {
  it("logs ready once everything listens, and exits 0 on SIGTERM after stopping everything", async () => {
    const { dir, stateDir } = configDir("127.0.0.1:0");
    const child = spawn(process.execPath, [CLI_PATH, "start", "--config", dir], {
      env: { ...process.env, NEXO_LOG: "info", NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    const ready = new Promise<{ http?: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line:\n${stderr}`)), 30_000);
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk;
        const line = logLines(stderr).find((entry) => entry.msg?.startsWith("nexo daemon ready"));
        if (line) {
          clearTimeout(timer);
          resolve(line.ready ?? {});
        }
      });
    });
    try {
      const summary = await ready;
      assert.match(summary.http ?? "", /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await fetch(`${summary.http}/readyz`)).status, 200, "ready means ready");
      assert.ok(existsSync(join(stateDir, "plugins", "loopback", "endpoint.json")), "the channel listens");
      child.kill("SIGTERM");
      const [code] = await once(child, "exit");
      assert.equal(code, 0, stderr);
      const messages = logLines(stderr).map((entry) => entry.msg);
      assert.equal(messages.filter((m) => String(m).startsWith("nexo daemon ready")).length, 1);
      assert.equal(messages.at(-1), "nexo daemon stopped");
      assert.equal(existsSync(join(stateDir, "daemon.lock")), false, "the lock is released");
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("a taken health port: exits 1 naming the http component and the fix, never says ready, leaves nothing running", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as { port: number };
    try {
      const { dir, stateDir } = configDir(`127.0.0.1:${port}`);
      const result = await runCli(["start", "--config", dir], {
        env: { ...process.env, NEXO_LOG: "info", NEXO_PLUGIN_INIT_TIMEOUT_MS: SLOW_MACHINE_INIT_MS },
        timeoutMs: 30_000,
      });
      assert.equal(result.signal, null, `nexo start hung instead of exiting:\n${result.stderr}`);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /nexo start: could not start http: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/,
      );
      assert.match(result.stderr, /http: \{ bind: 127\.0\.0\.1:0 \}/);
      assert.equal(
        logLines(result.stderr).some((entry) => entry.msg?.startsWith("nexo daemon ready")),
        false,
      );
      assert.equal(existsSync(join(stateDir, "daemon.lock")), false, "the lock is released");
      assert.equal(existsSync(join(stateDir, "plugins", "loopback")), false, "no plugin was started");
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
