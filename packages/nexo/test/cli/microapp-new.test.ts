/**
 * `nexo microapp new` (issue 14.15): the Python scaffold's own test and `nexo microapp check` pass
 * as written, the extensions.yaml entry it prints is one `nexo config validate` accepts, and a
 * TypeScript scaffold depends on the SDK it was given (`--sdk`). The TypeScript scaffold built and
 * tested against a real daemon, outside the repository, is newcomer-outside.test.ts.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runCli } from "../helpers/cli.js";

const SDK = fileURLToPath(new URL("../../../sdk", import.meta.url));
const ENV = { PATH: process.env.PATH, HOME: process.env.HOME };

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-microapp-new-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("nexo microapp new", () => {
  it("writes a Python microapp whose own test and microapp check pass, and prints an entry config validate accepts", {
    timeout: 120_000,
  }, async () => {
    const parent = tempDir();
    const made = await runCli(["microapp", "new", "Team Notes", "--dir", parent], { env: ENV });
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /a Python microapp "team-notes" with the tool team_notes_agents/);
    const dir = join(parent, "Team Notes");
    accessSync(join(dir, "main.py"), constants.X_OK);
    assert.match(
      readFileSync(join(dir, "plugin.toml"), "utf8"),
      /\[capabilities\.admin\][^[]*\nrequired = \["agents_crud"\]/,
    );

    const { NODE_TEST_CONTEXT: _ours, ...env } = process.env;
    const unit = spawnSync("python3", ["-m", "unittest"], {
      cwd: dir,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.equal(unit.status, 0, `${unit.stdout}${unit.stderr}`);
    assert.match(unit.stderr, /Ran 1 test/);

    const check = await runCli(["microapp", "check", dir], { env: ENV, timeoutMs: 60_000 });
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /tools +1 tool named team_notes_\*: team_notes_agents/);

    // The printed entry, as the operator pastes it into a config directory.
    const snippet = made.stdout.slice(made.stdout.indexOf("extensions:\n"));
    assert.match(snippet, new RegExp(`path: ${join(dir, "main.py")}\\n`));
    const config = join(parent, "config");
    const init = await runCli(["init", config, "--yes", "--provider", "scripted"], { env: ENV });
    assert.equal(init.code, 0, init.stderr);
    writeFileSync(join(config, "extensions.yaml"), snippet);
    const valid = await runCli(["config", "validate", config], { env: ENV, timeoutMs: 60_000 });
    assert.equal(valid.code, 0, valid.stdout + valid.stderr);
    assert.match(valid.stdout, /1 microapp/);
  });

  it("writes a TypeScript microapp on the SDK tarball given with --sdk, copied beside it", async () => {
    const parent = tempDir();
    const tarball = join(parent, "nexo-plugin-sdk-9.9.9.tgz");
    writeFileSync(tarball, "a tarball is copied, not read, when scaffolding");
    const made = await runCli(
      ["microapp", "new", "ts-app", "--lang", "ts", "--sdk", tarball, "--dir", parent],
      {
        env: ENV,
      },
    );
    assert.equal(made.code, 0, made.stderr);
    const dir = join(parent, "ts-app");
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    assert.equal(pkg.dependencies["nexo-plugin-sdk"], "file:nexo-plugin-sdk-9.9.9.tgz");
    assert.equal(readFileSync(join(dir, "nexo-plugin-sdk-9.9.9.tgz"), "utf8"), readFileSync(tarball, "utf8"));
    accessSync(join(dir, "main.mjs"), constants.X_OK);
    assert.match(readFileSync(join(dir, "main.test.ts"), "utf8"), /nexo-plugin-sdk\/microapp\/testing/);
    assert.match(made.stdout, new RegExp(`path: ${join(dir, "main.mjs")}`));
  });

  it("in a clone, a TypeScript microapp depends on the clone's SDK by path", async () => {
    const parent = tempDir();
    const made = await runCli(["microapp", "new", "ts-app", "--lang", "ts", "--dir", parent], { env: ENV });
    assert.equal(made.code, 0, made.stderr);
    const pkg = JSON.parse(readFileSync(join(parent, "ts-app", "package.json"), "utf8"));
    assert.equal(pkg.dependencies["nexo-plugin-sdk"], `file:${SDK}`);
  });

  it("refuses a bad name, a taken directory, a bad --sdk and --sdk without --lang ts", async () => {
    const parent = tempDir();
    const bad = await runCli(["microapp", "new", "9lives", "--dir", parent], { env: ENV });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /"9lives" makes no extension id/);
    mkdirSync(join(parent, "taken"));
    writeFileSync(join(parent, "taken", "keep.txt"), "mine");
    const taken = await runCli(["microapp", "new", "taken", "--dir", parent], { env: ENV });
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /exists and is not empty; nothing was written/);
    assert.equal(readFileSync(join(parent, "taken", "keep.txt"), "utf8"), "mine");
    const missing = await runCli(
      ["microapp", "new", "a", "--lang", "ts", "--sdk", join(parent, "nope.tgz"), "--dir", parent],
      {
        env: ENV,
      },
    );
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--sdk .*nope\.tgz: no such file or directory/);
    writeFileSync(join(parent, "sdk.zip"), "");
    const wrong = await runCli(
      ["microapp", "new", "b", "--lang", "ts", "--sdk", join(parent, "sdk.zip"), "--dir", parent],
      {
        env: ENV,
      },
    );
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /expected a packed SDK named nexo-plugin-sdk-<version>\.tgz/);
    const python = await runCli(["microapp", "new", "c", "--sdk", SDK, "--dir", parent], { env: ENV });
    assert.equal(python.code, 2);
    assert.match(python.stderr, /--sdk is for --lang ts/);
  });
});
