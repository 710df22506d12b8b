/**
 * Issue 14.14: logs for people on a terminal, JSON for machines. `nexo start` runs on a real pseudo
 * terminal (util-linux script(1)) and piped; `--log-format` chooses explicitly.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { CLI_PATH, runCli } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const SCRIPT = ["/usr/bin/script", "/bin/script"].find((path) => existsSync(path));

function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-log-format-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, "agents.yaml"),
    "agents:\n  - id: ana\n    model: { provider: scripted, model: demo }\n",
  );
  writeFileSync(
    join(dir, "daemon.yaml"),
    `state_dir: ${join(dir, "state")}\nhttp: { bind: "127.0.0.1:0" }\n`,
  );
  return dir;
}

/** `nexo start` on a pseudo terminal until its ready line; returns what the terminal showed. */
async function startOnTerminal(extra: string[]): Promise<string> {
  const quoted = [process.execPath, CLI_PATH, ...extra, "start", "--config", configDir()]
    .map((part) => `'${part.replace(/'/g, "'\\''")}'`)
    .join(" ");
  const tty = spawn(SCRIPT!, ["-qfec", quoted, "/dev/null"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  after(() => tty.kill("SIGKILL"));
  let screen = "";
  tty.stdout!.setEncoding("utf8").on("data", (d: string) => (screen += d));
  await waitFor("the ready line", () => screen.includes("nexo daemon ready") || undefined, 60_000);
  tty.stdin!.write("\u0003"); // Ctrl-C: the daemon stops
  await once(tty, "exit");
  return screen;
}

describe("log format", () => {
  it("is short pretty lines on a terminal, with the ready line naming the URLs", {
    timeout: 90_000,
  }, async (t) => {
    if (SCRIPT === undefined) return t.skip("util-linux script(1) is not installed");
    const screen = await startOnTerminal([]);
    assert.doesNotMatch(screen, /"level":\d+/, "no JSON lines on a terminal");
    assert.match(
      screen,
      /INFO.*nexo daemon ready: 1 agent, 0 plugins; health http:\/\/127\.0\.0\.1:\d+\/readyz/,
    );
  });

  it("is JSON on a terminal with --log-format json, and JSON when piped", { timeout: 90_000 }, async (t) => {
    if (SCRIPT === undefined) return t.skip("util-linux script(1) is not installed");
    const screen = await startOnTerminal(["--log-format", "json"]);
    assert.match(screen, /\{"level":30,.*"msg":"nexo daemon ready: 1 agent/);

    const piped = await runCli(["config", "validate", "/nonexistent-dir"], {
      env: { PATH: process.env.PATH },
    });
    assert.ok(!piped.stderr.includes("\u001b[") && !piped.stderr.includes("INFO"), piped.stderr);
  });

  it("refuses an unknown format as a usage error", async () => {
    const result = await runCli(["--log-format", "fancy", "doctor"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--log-format <format>' must be one of json, pretty, auto \(got "fancy"\)/);
  });
});
