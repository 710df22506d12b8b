/**
 * `nexo init` (issue 14.15): the directory it writes validates with no warning and answers in
 * `nexo chat`; it never overwrites without --force; on a terminal it asks for the provider, the
 * model and the key, and keeps the key out of every config file.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { CLI_PATH, runCli } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-init-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const ENV = { PATH: process.env.PATH, HOME: process.env.HOME };

describe("nexo init", () => {
  it("writes a valid, commented directory the chat can use at once", { timeout: 90_000 }, async () => {
    const dir = join(tempDir(), "my-agent");
    const init = await runCli(["init", dir, "--yes"], { env: ENV });
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /provider scripted, model nexo-scripted-demo/);
    assert.match(readFileSync(join(dir, "agents.yaml"), "utf8"), /^# The agents of this directory/);
    const validate = await runCli(["config", "validate", dir], { env: ENV });
    assert.equal(validate.code, 0, validate.stdout + validate.stderr);
    assert.doesNotMatch(validate.stdout + validate.stderr, /warning/);
    const chat = await runCli(["chat", "--config", dir], {
      env: ENV,
      input: "read README.md\n",
      timeoutMs: 60_000,
    });
    assert.equal(chat.code, 0, chat.stderr);
    assert.match(chat.stdout, /The assistant's file tools work in this folder/);
  });

  it("takes the vendor whose key is set, and warns about a key that is not", async () => {
    const keyed = join(tempDir(), "keyed");
    const withKey = await runCli(["init", keyed, "--yes"], {
      env: { ...ENV, OPENAI_API_KEY: "sk-from-env" },
    });
    assert.equal(withKey.code, 0, withKey.stderr);
    assert.match(withKey.stdout, /provider openai, model gpt-4o/);
    assert.doesNotMatch(
      readFileSync(join(keyed, "llm.yaml"), "utf8"),
      /sk-from-env/,
      "keys never go into files",
    );
    const keyless = join(tempDir(), "keyless");
    const without = await runCli(["init", keyless, "--yes", "--provider", "anthropic"], { env: ENV });
    assert.equal(without.code, 0, without.stderr);
    assert.match(without.stdout, /warning: .*provider "anthropic" has no API key.*set ANTHROPIC_API_KEY/);
  });

  it("never overwrites without --force, and refuses an unknown provider", async () => {
    const dir = tempDir();
    assert.equal((await runCli(["init", dir, "--yes"], { env: ENV })).code, 0);
    const before = readFileSync(join(dir, "agents.yaml"), "utf8");
    const again = await runCli(["init", dir, "--yes", "--provider", "ollama"], { env: ENV });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already has agents\.yaml, .*nothing was written \(--force overwrites them\)/);
    assert.equal(readFileSync(join(dir, "agents.yaml"), "utf8"), before);
    const forced = await runCli(["init", dir, "--yes", "--provider", "ollama", "--force"], { env: ENV });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(readFileSync(join(dir, "llm.yaml"), "utf8"), /type: openai_compatible/);
    const bad = await runCli(["init", dir, "--provider", "gemini"], { env: ENV });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Allowed choices are anthropic, openai, ollama, scripted/);
  });

  it("asks on a terminal and stores the key as a private secret", { timeout: 90_000 }, async (t) => {
    const script = ["/usr/bin/script", "/bin/script"].find((path) => existsSync(path));
    if (script === undefined) return t.skip("util-linux script(1) is not installed");
    const dir = join(tempDir(), "asked");
    // A pseudo terminal starts 0 columns wide; the prompts need a real width.
    const command = `stty cols 120 rows 40; ${[process.execPath, CLI_PATH, "init", dir].map((p) => `'${p}'`).join(" ")}`;
    const tty = spawn(script, ["-qfec", command, "/dev/null"], {
      env: { ...ENV, TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    after(() => tty.kill("SIGKILL"));
    let screen = "";
    tty.stdout!.setEncoding("utf8").on("data", (d: string) => (screen += d));
    await waitFor(
      "the provider question",
      () => screen.includes("Which model provider?") || undefined,
      60_000,
    );
    // The offline model is preselected (no key in the environment): up three times is Anthropic.
    tty.stdin!.write("\u001b[A\u001b[A\u001b[A\r");
    await waitFor("the model question", () => screen.includes("Which model?") || undefined);
    tty.stdin!.write("\r"); // the default model
    await waitFor("the key question", () => screen.includes("API key") || undefined);
    tty.stdin!.write("sk-ant-typed-secret\r");
    const [code] = (await once(tty, "exit")) as [number | null];
    assert.equal(code, 0, screen);
    assert.doesNotMatch(screen, /sk-ant-typed-secret/, "a typed key is not echoed");
    const secret = join(dir, "state", "secrets", "ANTHROPIC_API_KEY.txt");
    assert.equal(readFileSync(secret, "utf8").trim(), "sk-ant-typed-secret");
    assert.equal(statSync(secret).mode & 0o777, 0o600);
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".yaml"))) {
      assert.doesNotMatch(readFileSync(join(dir, name), "utf8"), /sk-ant-typed-secret/, name);
    }
    // The stored secret resolves ${ANTHROPIC_API_KEY:-}: no "no API key" warning.
    const validate = await runCli(["config", "validate", dir], { env: ENV });
    assert.equal(validate.code, 0, validate.stdout);
    assert.doesNotMatch(validate.stdout + validate.stderr, /no API key/);
  });
});
