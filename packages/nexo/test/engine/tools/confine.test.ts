import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  displayPath,
  isInside,
  PathEscapeError,
  PathNotFoundError,
  resolveInWorkspace,
  WorkspaceUnavailableError,
} from "../../../src/engine/tools/confine.js";

// root/ws is the workspace; root/ws-evil and root/outside are not.
let root: string;
let ws: string;
before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-confine-")));
  ws = join(root, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(join(ws, "src", "main.ts"), "x");
  mkdirSync(join(root, "ws-evil"));
  writeFileSync(join(root, "ws-evil", "loot.txt"), "loot");
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "outside", "secret.txt"), "secret");
  symlinkSync(join(root, "outside"), join(ws, "link-out"));
  symlinkSync(join(root, "outside", "secret.txt"), join(ws, "secret-link"));
  symlinkSync(join(root, "outside", "planted.txt"), join(ws, "dangling-out"));
  symlinkSync(join(ws, "src"), join(ws, "src-link"));
  symlinkSync("loop-b", join(ws, "loop-a"));
  symlinkSync("loop-a", join(ws, "loop-b"));
});
after(() => rmSync(root, { recursive: true, force: true }));

async function refused(userPath: string, options = {}): Promise<PathEscapeError> {
  try {
    await resolveInWorkspace(ws, userPath, options);
  } catch (error) {
    assert.ok(error instanceof PathEscapeError, `expected PathEscapeError, got ${String(error)}`);
    return error;
  }
  assert.fail(`${userPath} was allowed`);
}

describe("resolveInWorkspace", () => {
  it("resolves relative and absolute paths inside the workspace to real paths", async () => {
    assert.equal(await resolveInWorkspace(ws, "src/main.ts"), join(ws, "src", "main.ts"));
    assert.equal(await resolveInWorkspace(ws, join(ws, "src", "main.ts")), join(ws, "src", "main.ts"));
    assert.equal(await resolveInWorkspace(ws, "src/../src/./main.ts"), join(ws, "src", "main.ts"));
    assert.equal(await resolveInWorkspace(ws, "."), ws);
  });

  it("follows symlinks that stay inside", async () => {
    assert.equal(await resolveInWorkspace(ws, "src-link/main.ts"), join(ws, "src", "main.ts"));
  });

  it("refuses .. escapes, absolute paths outside and the prefix trick", async () => {
    const dotdot = await refused("../../etc/passwd");
    assert.equal(dotdot.reason, "outside_workspace");
    assert.equal(dotdot.userPath, "../../etc/passwd");
    assert.match(dotdot.message, /outside the workspace/);
    await refused("/etc/passwd");
    await refused("src/../../outside/secret.txt");
    const evil = await refused(join(root, "ws-evil", "loot.txt"));
    assert.equal(evil.resolvedPath, join(root, "ws-evil", "loot.txt"));
    await refused("../ws-evil/loot.txt");
  });

  it("refuses symlinks pointing outside, for reading and for writing", async () => {
    const viaFile = await refused("secret-link");
    assert.equal(viaFile.resolvedPath, join(root, "outside", "secret.txt"));
    await refused("link-out/secret.txt");
    // A file that does not exist yet, under a symlinked directory that points outside.
    const newFile = await refused("link-out/new/deeper.txt", { forWrite: true });
    assert.equal(newFile.resolvedPath, join(root, "outside", "new", "deeper.txt"));
    // A dangling link: writing through it would create its target outside.
    const dangling = await refused("dangling-out", { forWrite: true });
    assert.equal(dangling.resolvedPath, join(root, "outside", "planted.txt"));
  });

  it("refuses NUL bytes even when unconfined", async () => {
    const error = await refused("src/main.ts\0.png");
    assert.equal(error.reason, "nul_byte");
    await refused("a\0b", { unconfined: true });
  });

  it("requires existence unless the path is for writing", async () => {
    await assert.rejects(resolveInWorkspace(ws, "src/missing.ts"), PathNotFoundError);
    assert.equal(
      await resolveInWorkspace(ws, "src/new/dir/file.ts", { forWrite: true }),
      join(ws, "src", "new", "dir", "file.ts"),
    );
    // A missing file under an outside path is an escape, not a "not found".
    await refused("../outside/missing.txt");
  });

  it("lets unconfined mode out, still returning real paths", async () => {
    assert.equal(
      await resolveInWorkspace(ws, "/etc/passwd", { unconfined: true }),
      realpathSync("/etc/passwd"),
    );
    assert.equal(
      await resolveInWorkspace(ws, "secret-link", { unconfined: true }),
      join(root, "outside", "secret.txt"),
    );
    assert.equal(
      await resolveInWorkspace(ws, "link-out/new.txt", { unconfined: true, forWrite: true }),
      join(root, "outside", "new.txt"),
    );
  });

  it("reports symlink loops as ELOOP and an unusable workspace clearly", async () => {
    await assert.rejects(resolveInWorkspace(ws, "loop-a"), { code: "ELOOP" });
    // The operator's problem, told without the host path (tool results reach the agent's users).
    await assert.rejects(resolveInWorkspace(join(root, "nope"), "x"), (error: unknown) => {
      assert.ok(error instanceof WorkspaceUnavailableError);
      assert.equal(error.workspace, join(root, "nope"));
      assert.match(error.message, /workspace is not usable \(ENOENT\)/);
      assert.ok(!error.message.includes(root));
      return true;
    });
    await assert.rejects(resolveInWorkspace("relative/ws", "x"), /not an absolute path/);
  });

  it("works when the workspace itself is reached through a symlink", async () => {
    const alias = join(root, "ws-alias");
    symlinkSync(ws, alias);
    assert.equal(await resolveInWorkspace(alias, "src/main.ts"), join(ws, "src", "main.ts"));
    await assert.rejects(resolveInWorkspace(alias, "../outside/secret.txt"), PathEscapeError);
  });
});

describe("isInside and displayPath", () => {
  it("does not fall for a shared prefix", () => {
    assert.equal(isInside("/work/ws", "/work/ws"), true);
    assert.equal(isInside("/work/ws", "/work/ws/a"), true);
    assert.equal(isInside("/work/ws", "/work/ws-evil"), false);
    assert.equal(isInside("/work/ws", "/work/wsx/a"), false);
    assert.equal(isInside("/", "/etc"), true);
  });

  it("shows workspace paths relative and others absolute", () => {
    assert.equal(displayPath("/work/ws", "/work/ws/src/a.ts"), "src/a.ts");
    assert.equal(displayPath("/work/ws", "/work/ws"), ".");
    assert.equal(displayPath("/work/ws", "/etc/hosts"), "/etc/hosts");
  });
});
