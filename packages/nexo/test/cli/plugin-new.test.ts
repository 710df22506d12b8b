/**
 * `nexo plugin new` (issue 14.15): the Python and the TypeScript scaffolds work as written — their
 * own tests pass, `nexo plugin check` passes, `nexo plugin call` runs the tool — and a TypeScript
 * plugin depends on the SDK given with --sdk (issue 14.3). Outside the repository, on the packed
 * CLI and SDK: newcomer-outside.test.ts.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCli } from "../helpers/cli.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
// A generous handshake deadline: at load 30 a python3 start can take more than the default 5 s.
const ENV = { PATH: process.env.PATH, HOME: process.env.HOME, NEXO_PLUGIN_INIT_TIMEOUT_MS: "60000" };

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-plugin-new-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function run(command: string, args: string[], cwd: string) {
  // Not this test run's context: the scaffold's own `node --test` must run its files.
  const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 120_000 });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("nexo plugin new", () => {
  it("writes a Python plugin whose own test and plugin check pass", { timeout: 120_000 }, async () => {
    const parent = tempDir();
    const made = await runCli(["plugin", "new", "my-tools", "--dir", parent], { env: ENV });
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /a Python plugin "my_tools" with the tool my_tools_greet/);
    const dir = join(parent, "my-tools");
    const unit = run("python3", ["-m", "unittest"], dir);
    assert.equal(unit.code, 0, unit.output);
    const check = await runCli(["plugin", "check", dir], { env: ENV, timeoutMs: 60_000 });
    assert.equal(check.code, 0, check.stdout + check.stderr);
    const call = await runCli(["plugin", "call", dir, "my_tools_greet", '{"name":"Ada"}'], {
      env: ENV,
      timeoutMs: 60_000,
    });
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /Hello, Ada!/);
  });

  it("writes a TypeScript plugin on nexo-plugin-sdk that compiles, tests and checks", {
    timeout: 180_000,
  }, async () => {
    const parent = tempDir();
    const made = await runCli(["plugin", "new", "ts-tools", "--lang", "ts", "--dir", parent], { env: ENV });
    assert.equal(made.code, 0, made.stderr);
    const dir = join(parent, "ts-tools");
    // What `npm install` would do offline: link the SDK the manifest names and the repo's types.
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(join(REPO, "packages", "sdk"), join(dir, "node_modules", "nexo-plugin-sdk"));
    symlinkSync(join(REPO, "node_modules", "@types"), join(dir, "node_modules", "@types"));
    const build = run(process.execPath, [join(REPO, "node_modules", "typescript", "bin", "tsc")], dir);
    assert.equal(build.code, 0, build.output);
    const unit = run(process.execPath, ["--test", "dist/"], dir);
    assert.equal(unit.code, 0, unit.output);
    assert.match(unit.output, /# pass 1/);
    const check = await runCli(["plugin", "check", dir], { env: ENV, timeoutMs: 60_000 });
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });

  it("depends on the SDK tarball given with --sdk by a relative path, the tarball copied beside it", async () => {
    const parent = tempDir();
    const tarball = join(parent, "nexo-plugin-sdk-9.9.9.tgz");
    writeFileSync(tarball, "a tarball is copied, not read, when scaffolding");
    const made = await runCli(
      ["plugin", "new", "ts-tools", "--lang", "ts", "--sdk", tarball, "--dir", parent],
      {
        env: ENV,
      },
    );
    assert.equal(made.code, 0, made.stderr);
    const dir = join(parent, "ts-tools");
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    assert.equal(pkg.dependencies["nexo-plugin-sdk"], "file:nexo-plugin-sdk-9.9.9.tgz");
    assert.equal(readFileSync(join(dir, "nexo-plugin-sdk-9.9.9.tgz"), "utf8"), readFileSync(tarball, "utf8"));
    const python = await runCli(["plugin", "new", "py", "--sdk", tarball, "--dir", parent], { env: ENV });
    assert.equal(python.code, 2);
    assert.match(python.stderr, /--sdk is for --lang ts/);
  });

  it("refuses a name that makes no id and a directory that is not empty", async () => {
    const parent = tempDir();
    const bad = await runCli(["plugin", "new", "9lives", "--dir", parent], { env: ENV });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"9lives" makes no plugin id/);
    mkdirSync(join(parent, "taken"));
    writeFileSync(join(parent, "taken", "keep.txt"), "mine");
    const taken = await runCli(["plugin", "new", "taken", "--dir", parent], { env: ENV });
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /exists and is not empty; nothing was written/);
  });
});
