/**
 * `npm start` (scripts/quickstart.mjs: `nexo chat` on examples/quickstart) as a newcomer runs it,
 * twice: the second run joins the first run's daemon. When the state dir is held by a daemon the
 * chat cannot join, the run fails loudly — exit 1 with the daemon's reason — and disturbs nothing
 * (issue 14.8: it used to exit 0, hide the state-dir lock behind "see the log", and delete the
 * running daemon's endpoint file).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_PATH } from "../helpers/cli.js";
import { killProcessesOfStateDir } from "../helpers/state-dir-processes.js";
import { waitFor } from "../helpers/wait.js";

const REPO = fileURLToPath(new URL("../../../..", import.meta.url));
const QUICKSTART = join(REPO, "scripts", "quickstart.mjs");

function quickstart(stateDir: string): ChildProcess & { output: () => string } {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NEXO_STATE_DIR: stateDir };
  const child = spawn(process.execPath, [QUICKSTART], { cwd: REPO, env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  return Object.assign(child, { output: () => output });
}

describe("npm start", () => {
  it("chats with the quickstart agent and a second run joins the first run's daemon", {
    timeout: 180_000,
  }, async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-quickstart-"));
    after(() => rmSync(stateDir, { recursive: true, force: true }));
    // The daemon the chat starts outlives the chat's SIGKILL: whatever runs on this state dir goes.
    after(() => killProcessesOfStateDir(stateDir));

    const first = quickstart(stateDir);
    after(() => first.kill("SIGKILL"));
    await waitFor(
      "the first run's AppServer",
      () => existsSync(join(stateDir, "appserver.json")) || undefined,
      120_000,
    );

    // The daemon the chat started runs as `nexo start` from the `nexo` command runs (bin/nexo).
    const daemonPid = (JSON.parse(readFileSync(join(stateDir, "appserver.json"), "utf8")) as { pid: number })
      .pid;
    const daemonArgv = readFileSync(`/proc/${daemonPid}/cmdline`, "utf8").split("\0");
    assert.deepEqual(daemonArgv.slice(0, 4), [
      process.execPath,
      "--v8-pool-size=1",
      `${join(realpathSync(CLI_PATH), "..")}/../bundle/daemon-main.js`,
      "start",
    ]);
    assert.ok(readFileSync(`/proc/${daemonPid}/environ`, "utf8").split("\0").includes("MALLOC_ARENA_MAX=2"));
    // The chat runs in the script's own process (no node idling beside it to wait for the chat),
    // so the daemon's parent is the process `npm start` started.
    const daemonParent = Number(
      readFileSync(`/proc/${daemonPid}/stat`, "utf8").split(") ")[1]!.split(" ")[1],
    );
    assert.equal(daemonParent, first.pid);

    const second = quickstart(stateDir);
    second.stdin?.end("weather in Bern\n");
    const [code] = (await once(second, "exit")) as [number | null];
    assert.equal(code, 0, second.output());
    assert.match(second.output(), /the running daemon \(pid \d+/);
    assert.match(second.output(), /Forecast for Bern/);
    // The operator console's login URL comes with the banner, before the conversation (issue 16).
    const joined = second.output();
    const consoleAt = joined.search(/console: http:\/\/127\.0\.0\.1:\d+\/#token=\S{32,}\n/);
    assert.ok(consoleAt !== -1, joined);
    assert.ok(consoleAt < joined.indexOf("Forecast for Bern"), `the URL came after the answer:\n${joined}`);
    assert.ok(
      existsSync(join(stateDir, "appserver.json")),
      "the second run leaves the first run's daemon up",
    );

    // Ctrl-D in the first run's chat ends it and stops the daemon it started.
    first.stdin?.end("weather in Paris\n");
    const [firstCode] = (await once(first, "exit")) as [number | null];
    assert.equal(firstCode, 0, first.output());
    assert.match(first.output(), /Forecast for Paris/);
    // The operator console came up with the daemon the chat started: its login URL was printed.
    assert.match(first.output(), /console: http:\/\/127\.0\.0\.1:\d+\/#token=\S{32,}/);
    assert.equal(existsSync(join(stateDir, "appserver.json")), false);
  });

  it("fails with the daemon's reason when another daemon holds the state dir", {
    timeout: 180_000,
  }, async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-quickstart-"));
    after(() => rmSync(stateDir, { recursive: true, force: true }));
    // The daemon the chat starts outlives the chat's SIGKILL: whatever runs on this state dir goes.
    after(() => killProcessesOfStateDir(stateDir));
    const endpointFile = join(stateDir, "plugins", "loopback", "endpoint.json");
    // A daemon started by hand on the same state dir, without an AppServer to join.
    const daemon = spawn(
      process.execPath,
      [CLI_PATH, "start", "--config", join(REPO, "examples", "quickstart")],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NEXO_STATE_DIR: stateDir },
        stdio: "ignore",
      },
    );
    after(() => daemon.kill("SIGKILL"));
    await waitFor("the daemon's loopback endpoint", () => existsSync(endpointFile) || undefined, 120_000);
    const endpoint = readFileSync(endpointFile, "utf8");

    const run = quickstart(stateDir);
    run.stdin?.end();
    const [code] = (await once(run, "exit")) as [number | null];
    assert.equal(code, 1, run.output());
    assert.match(run.output(), /nexo start: .*in use by another nexo daemon/);
    assert.equal(
      readFileSync(endpointFile, "utf8"),
      endpoint,
      "the running daemon's endpoint was not touched",
    );
    daemon.kill("SIGTERM");
    await once(daemon, "exit");
  });
});
