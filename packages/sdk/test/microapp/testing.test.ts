/**
 * The microapp test daemon (`nexo-plugin-sdk/microapp/testing`) itself: which CLI it runs, that it
 * leaves nothing behind (daemon, microapp processes, temp directory), that a tool the agent is not
 * offered is a clear error, and that a daemon that cannot start says why and cleans up. The
 * microapp here is a plain Node script with no SDK, so only the helper is under test. Uses the
 * built CLI (npm run build).
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { findNexoCli, startTestDaemon, type TestDaemon } from "nexo-plugin-sdk/microapp/testing";

const CLI = fileURLToPath(new URL("../../../nexo/bin/nexo.js", import.meta.url));

/** The smallest microapp: one tool echoing its args, by hand over stdio. */
const ECHO_APP = `#!/usr/bin/env node
const rl = require("node:readline").createInterface({ input: process.stdin });
const send = (frame) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...frame }) + "\\n");
const tools = [{ name: "echo_say", description: "Echo", input_schema: { type: "object" } }];
rl.on("line", (line) => {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) return;
  if (method === "initialize" || method === "tools/list") send({ id, result: { tools } });
  else if (method === "tools/call") send({ id, result: { output: { said: params.args } } });
  else if (method === "shutdown") { send({ id, result: { ok: true } }); process.exit(0); }
  else send({ id, error: { code: -32601, message: "no " + method } });
});
`;

function echoApp(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-echo-app-"));
  const path = join(dir, "main.cjs");
  writeFileSync(path, ECHO_APP);
  chmodSync(path, 0o755);
  return path;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("startTestDaemon", () => {
  test("runs the microapp in a real daemon, the agent calls it, and stop leaves no process and no file", async () => {
    const app = echoApp();
    cleanups.push(() => rmSync(dirname(app), { recursive: true, force: true }));
    const daemon: TestDaemon = await startTestDaemon({ nexo: CLI, microapps: { echo: { path: app } } });
    cleanups.push(() => daemon.stop());
    const running = daemon.microapp("echo");
    assert.ok(running !== undefined && alive(running.pid), "the daemon runs the microapp");
    const call = await daemon.callTool("echo_say", { n: 1, nested: { list: ["a", 2] } });
    assert.deepEqual(call, {
      tool: "echo_say",
      arguments: { n: 1, nested: { list: ["a", 2] } },
      success: true,
      text: JSON.stringify({ said: { n: 1, nested: { list: ["a", 2] } } }, null, 2),
    });
    await assert.rejects(
      daemon.callTool("echo_missing", {}),
      /the agent did not call echo_missing.*not available/s,
    );

    const root = dirname(daemon.configDir);
    assert.ok(existsSync(join(daemon.stateDir, "nexo.db")));
    await daemon.stop();
    assert.equal(alive(daemon.pid), false, "the daemon exited");
    assert.equal(alive(running.pid), false, "its microapp too");
    assert.equal(existsSync(root), false, "the temp directory is gone");
    await daemon.stop(); // idempotent
  });

  test("a daemon that cannot start rejects with its log and removes its directory", async () => {
    const before = new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("nexo-microapp-test-")));
    await assert.rejects(
      startTestDaemon({ nexo: CLI, microapps: { echo: { path: "/nonexistent/main.py" } } }),
      /the daemon exited while waiting for .*nexo start[\s\S]*extensions\.yaml/,
    );
    const after = readdirSync(tmpdir()).filter((name) => name.startsWith("nexo-microapp-test-"));
    assert.deepEqual(
      after.filter((name) => !before.has(name)),
      [],
    );
  });
});

describe("findNexoCli", () => {
  test("an explicit path wins, then NEXO_CLI; a JavaScript entry runs under this Node", () => {
    assert.deepEqual(findNexoCli(CLI, {}), {
      program: process.execPath,
      args: [CLI],
      source: "the nexo option",
    });
    assert.equal(findNexoCli(undefined, { NEXO_CLI: CLI }).source, "NEXO_CLI");
    assert.throws(() => findNexoCli("/no/such/nexo", {}), /the nexo CLI "\/no\/such\/nexo" does not exist/);
  });

  test("the project's node_modules/.bin/nexo, else PATH, else an error saying how to get one", () => {
    assert.equal(findNexoCli(undefined, { PATH: "" }).source, "node_modules/.bin", "this repository has one");
    const elsewhere = mkdtempSync(join(tmpdir(), "nexo-no-cli-"));
    const cwd = process.cwd();
    try {
      process.chdir(elsewhere);
      assert.throws(
        () => findNexoCli(undefined, { PATH: "" }),
        /no nexo CLI found: install the nexo package/,
      );
      const bin = join(elsewhere, "bin");
      const onPath = join(bin, "nexo");
      mkdirSync(bin);
      writeFileSync(onPath, "#!/bin/sh\nexit 0\n");
      chmodSync(onPath, 0o755);
      const found = findNexoCli(undefined, { PATH: bin });
      assert.deepEqual([found.program, found.args, found.source], [onPath, [], "PATH"]);
    } finally {
      process.chdir(cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
