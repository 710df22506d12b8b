/**
 * `nexo app-server` as launchers start and stop it: no flag at all serves stdio in the current
 * directory; stdin's end stops a stdio server (exit 0) but not a pure WebSocket one; SIGTERM exits
 * 0 by itself (the server's own deadline keeps it within the 2 s launchers allow); unusable listen plans and workspaces are refused at start with
 * one line on stderr, exit 2 and nothing on stdout.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { AppServerProcess, upgradeStatus } from "../helpers/appserver-client.js";
import { runCli } from "../helpers/cli.js";

const TOKEN = "cli-token-0123456789abcdef";
/**
 * The server leaves at most 1.5 s after SIGTERM (its own timer), inside the 2 s launchers allow.
 * Measured from this process on a loaded machine, signal delivery and the exit notice add
 * seconds, so the bound here only tells "exited by itself, promptly" from "hung until killed".
 */
const PROMPT_EXIT_MS = 10_000;
const processes: AppServerProcess[] = [];
afterEach(async () => {
  for (const p of processes.splice(0)) await p.stop();
});

function start(options: ConstructorParameters<typeof AppServerProcess>[0] = {}): AppServerProcess {
  const server = new AppServerProcess(options);
  processes.push(server);
  return server;
}

/** Milliseconds from `since` to the process's exit, and its exit status. */
async function exitAfter(server: AppServerProcess, since: number) {
  const exit = await server.exited;
  return { ...exit, ms: exit.at - since };
}

describe("nexo app-server: launch and stop", () => {
  test("no flag: stdio in the current directory; stdin's end exits 0", async () => {
    const server = start();
    assert.ok((await server.initialize()).result);
    const since = Date.now();
    server.endInput();
    const exit = await exitAfter(server, since);
    assert.equal(exit.code, 0, server.stderr);
    assert.equal(server.stdout.split("\n").filter(Boolean).length, 1);
  });

  test("SIGTERM exits 0 promptly (stdio)", async () => {
    const server = start();
    await server.initialize();
    const since = Date.now();
    server.kill("SIGTERM");
    const exit = await exitAfter(server, since);
    assert.equal(exit.code, 0, server.stderr);
    assert.ok(exit.ms < PROMPT_EXIT_MS, `exited after ${exit.ms} ms`);
  });

  test("WebSocket only: stdin is ignored, even when it ends; SIGTERM exits 0 promptly", async () => {
    const server = start({ args: ["--listen", "ws://127.0.0.1:0"] });
    const url = await server.websocketUrl();
    server.endInput();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(server.child.exitCode, null, "stdin's end must not stop a WebSocket server");
    assert.equal(await upgradeStatus(url), 101);
    const since = Date.now();
    server.kill("SIGTERM");
    const exit = await exitAfter(server, since);
    assert.equal(exit.code, 0, server.stderr);
    assert.ok(exit.ms < PROMPT_EXIT_MS, `exited after ${exit.ms} ms`);
    assert.equal(server.stdout, "", "a WebSocket server writes nothing on stdout");
  });

  test("ws+stdio serves both; stdin's end stops it", async () => {
    const server = start({ args: ["--listen", "ws+stdio://127.0.0.1:0"] });
    const url = await server.websocketUrl();
    assert.ok((await server.initialize()).result);
    assert.equal(await upgradeStatus(url), 101);
    server.endInput();
    assert.equal((await server.exited).code, 0);
  });

  test("appserver.yaml in --config gives listen and token; flags win", async () => {
    const config = mkdtempSync(join(tmpdir(), "nexo-as-config-"));
    writeFileSync(join(config, "appserver.yaml"), `listen: ws://127.0.0.1:0\ntoken: \${MY_TOKEN}\n`);
    const server = start({ args: ["--config", config], env: { MY_TOKEN: TOKEN }, stdin: "ignore" });
    const url = await server.websocketUrl();
    assert.equal(await upgradeStatus(url), 401);
    assert.equal(await upgradeStatus(`${url}?token=${TOKEN}`), 101);
  });

  test("refused at start: a non-loopback listen without a token, a weak token, wss, a missing workspace", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--listen", "ws://0.0.0.0:0"], /reachable from other machines, so a token is required/],
      [["--listen", "ws://127.0.0.1:0", "--token", "short"], /at least 16 characters/],
      [["--listen", "wss://127.0.0.1:0"], /wss:\/\/ is not served/],
      [["--workspace", "/nonexistent/nexo-workspace"], /is not a directory/],
    ];
    for (const [args, problem] of cases) {
      const r = await runCli(["app-server", ...args], { timeoutMs: 10_000 });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, problem);
      assert.equal(r.stdout, "", "nothing but JSON-RPC may reach stdout");
    }
    const config = mkdtempSync(join(tmpdir(), "nexo-as-badconfig-"));
    writeFileSync(join(config, "appserver.yaml"), "listen: 12\nunknown: true\n");
    const r = await runCli(["app-server", "--config", config], { timeoutMs: 10_000 });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /appserver\.yaml/);
  });
});
