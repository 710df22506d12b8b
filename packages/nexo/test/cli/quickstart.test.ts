/**
 * `npm start` (scripts/quickstart.mjs) as a newcomer runs it twice: the second run must fail
 * loudly — exit 1 with the daemon's reason — and must not disturb the first (issue 14.8: it used
 * to exit 0, hide the state-dir lock behind "see the log", and delete the first run's endpoint).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
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
  it("a second run fails with the daemon's reason and leaves the first run alone", {
    timeout: 180_000,
  }, async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "nexo-quickstart-"));
    after(() => rmSync(stateDir, { recursive: true, force: true }));
    const endpointFile = join(stateDir, "plugins", "loopback", "endpoint.json");

    const first = quickstart(stateDir);
    after(() => first.kill("SIGKILL"));
    await waitFor("the first run's loopback endpoint", () => existsSync(endpointFile) || undefined, 120_000);
    const endpoint = readFileSync(endpointFile, "utf8");

    const second = quickstart(stateDir);
    const [code] = (await once(second, "exit")) as [number | null];
    assert.equal(code, 1, second.output());
    assert.match(second.output(), /nexo start: .*in use by another nexo daemon/);
    assert.equal(readFileSync(endpointFile, "utf8"), endpoint, "the first run's endpoint was not touched");

    // Ctrl-D in the first run's chat ends it cleanly.
    first.stdin?.end();
    const [firstCode] = (await once(first, "exit")) as [number | null];
    assert.equal(firstCode, 0, first.output());
  });
});
