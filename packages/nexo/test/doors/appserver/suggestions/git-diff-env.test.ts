/**
 * A workspace's own git config can make `git diff` run a program (core.fsmonitor here; hooks
 * elsewhere). The commit-message diff must not hand that program the server's secrets.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { diffOf } from "../../../../src/doors/appserver/suggestions/git-diff.js";

test("the programs a repository's config makes git run see no secret of the server", async () => {
  const workspace = mkdtempSync(join(tmpdir(), "nexo-git-diff-env-"));
  const run = (...args: string[]) => execFileSync("git", args, { cwd: workspace, stdio: "ignore" });
  run("init", "-q");
  writeFileSync(join(workspace, "a.txt"), "one\n");
  run("add", "a.txt");
  run("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "first");
  const dump = join(workspace, "..", `${workspace.split("/").at(-1)}-env.out`);
  const hook = join(workspace, "..", `${workspace.split("/").at(-1)}-hook.sh`);
  writeFileSync(hook, `#!/bin/sh\nenv > '${dump}'\n`);
  chmodSync(hook, 0o755);
  run("config", "core.fsmonitor", hook);
  writeFileSync(join(workspace, "a.txt"), "one\ntwo\n");

  const secret = "sk-test-secret-of-the-server-0123456789";
  process.env.NEXO_TEST_PROVIDER_API_KEY = secret;
  try {
    const diff = await diffOf(workspace, ["a.txt"], 10_000);
    assert.match(diff, /\+two/);
  } finally {
    delete process.env.NEXO_TEST_PROVIDER_API_KEY;
  }
  const seen = readFileSync(dump, "utf8");
  assert.match(seen, /GIT_TERMINAL_PROMPT=0/, "the repository's program ran, with git's environment");
  assert.doesNotMatch(seen, /NEXO_TEST_PROVIDER_API_KEY/);
  assert.ok(!seen.includes(secret));
});
