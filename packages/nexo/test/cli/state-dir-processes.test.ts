/**
 * The chat and quickstart tests' cleanup (helpers/state-dir-processes.ts): it must find and stop a
 * process the test holds no handle to by its NEXO_STATE_DIR, and leave every other process alone.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killProcessesOfStateDir, processesOfStateDir } from "../helpers/state-dir-processes.js";

const IDLE = "setInterval(() => {}, 1000)";

describe("killProcessesOfStateDir", { skip: process.platform !== "linux" && "reads /proc" }, () => {
  it("kills what runs on the state dir, and nothing on another one", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-state-procs-"));
    after(() => rmSync(stateDir, { recursive: true, force: true }));
    const spawnOn = (dir: string) =>
      spawn(process.execPath, ["-e", IDLE], {
        env: { PATH: process.env.PATH, NEXO_STATE_DIR: dir },
        stdio: "ignore",
      });
    const mine = spawnOn(stateDir);
    // A neighbour whose state dir starts with the same path must not be taken for it.
    const neighbour = spawnOn(`${stateDir}-other`);
    after(() => neighbour.kill("SIGKILL"));
    await Promise.all([once(mine, "spawn"), once(neighbour, "spawn")]);

    assert.deepEqual(processesOfStateDir(stateDir), [mine.pid]);
    const [, signal] = await Promise.all([
      Promise.resolve(killProcessesOfStateDir(stateDir)),
      once(mine, "exit").then(([, s]) => s),
    ]);
    assert.equal(signal, "SIGKILL");
    assert.equal(neighbour.exitCode, null);
    assert.equal(neighbour.signalCode, null);
    assert.deepEqual(processesOfStateDir(stateDir), []);
  });
});
