/**
 * Held directories and the descriptor walk, in both modes: descriptor paths (/proc/self/fd, the
 * race-free one on Linux) and the path fallback used where /proc is missing.
 */
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  descriptorPathsWork,
  forcePathFallbackForTesting,
  HeldDir,
} from "../../../src/engine/tools/held-dir.js";
import { createMissingDirs, LookupError, locate } from "../../../src/engine/tools/locate.js";

let root: string;
before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "nexo-held-")));
  mkdirSync(join(root, "a", "b"), { recursive: true });
  writeFileSync(join(root, "a", "b", "f.txt"), "content\n");
  mkdirSync(join(root, "other"));
  writeFileSync(join(root, "other", "g.txt"), "other\n");
  symlinkSync(join(root, "other"), join(root, "a", "abs-link"));
  symlinkSync("../other/g.txt", join(root, "a", "rel-link"));
  symlinkSync("b/../../other", join(root, "a", "dotdot-link"));
  symlinkSync("loop2", join(root, "a", "loop1"));
  symlinkSync("loop1", join(root, "a", "loop2"));
});
after(() => {
  forcePathFallbackForTesting(false);
  rmSync(root, { recursive: true, force: true });
});

for (const mode of ["descriptor paths", "path fallback"] as const) {
  describe(mode, () => {
    before(() => forcePathFallbackForTesting(mode === "path fallback"));
    after(() => forcePathFallbackForTesting(false));

    it("names entries through the descriptor (or the path) and refuses symlinks as directories", async () => {
      if (mode === "descriptor paths" && !descriptorPathsWork()) return;
      const dir = await HeldDir.openTrusted(join(root, "a"));
      try {
        if (mode === "descriptor paths") assert.match(dir.entry("b"), /^\/proc\/self\/fd\/\d+\/b$/);
        else assert.equal(dir.entry("b"), join(root, "a", "b"));
        const b = await dir.subdir("b");
        assert.equal(b.path, join(root, "a", "b"));
        assert.equal(readFileSync(b.entry("f.txt"), "utf8"), "content\n");
        await b.close();
        await assert.rejects(dir.subdir("abs-link"), {
          code: mode === "descriptor paths" ? "ENOTDIR" : "ELOOP",
        });
        await assert.rejects(dir.openFile("rel-link"), { code: "ELOOP" });
        assert.equal((await dir.lstatEntry("abs-link"))?.isSymbolicLink(), true);
        assert.equal(await dir.lstatEntry("missing"), undefined);
        const parent = await dir.parent();
        assert.equal(parent.path, root);
        await parent.close();
      } finally {
        await dir.close();
      }
    });

    it("locate follows absolute, relative and .. symlinks by hand and reports real paths", async () => {
      const start = await HeldDir.openTrusted(join(root, "a"));
      try {
        const viaAbs = await locate(start, ["abs-link", "g.txt"]);
        assert.equal(viaAbs.path, join(root, "other", "g.txt"));
        assert.equal(viaAbs.stats?.isFile(), true);
        assert.equal(readFileSync(viaAbs.dir.entry(viaAbs.name!), "utf8"), "other\n");
        await viaAbs.dir.close();
        const viaRel = await locate(start, ["rel-link"]);
        assert.equal(viaRel.path, join(root, "other", "g.txt"));
        await viaRel.dir.close();
        const viaDotDot = await locate(start, ["dotdot-link", "g.txt"]);
        assert.equal(viaDotDot.path, join(root, "other", "g.txt"));
        await viaDotDot.dir.close();
        const self = await locate(start, ["b", ".."]);
        assert.equal(self.name, undefined);
        assert.equal(self.path, join(root, "a"));
        await self.dir.close();
        await assert.rejects(locate(start, ["loop1"]), (error: unknown) => {
          assert.ok(error instanceof LookupError);
          assert.equal(error.code, "ELOOP");
          return true;
        });
        await assert.rejects(locate(start, ["b", "f.txt", "x"]), { code: "ENOTDIR" });
        await assert.rejects(locate(start, ["nope", "x"]), {
          code: "ENOENT",
          path: join(root, "a", "nope", "x"),
        });
      } finally {
        await start.close();
      }
    });

    it("creates missing directories for a write, never through a symlink", async () => {
      const start = await HeldDir.openTrusted(root);
      try {
        const location = await locate(start, ["a", "new", "deeper", "..", "n.txt"], { allowMissing: true });
        assert.deepEqual(location.missing, ["new"]);
        assert.equal(location.path, join(root, "a", "new", "n.txt"));
        const dir = await createMissingDirs(location);
        assert.equal(dir.path, join(root, "a", "new"));
        writeFileSync(dir.entry("n.txt"), "made\n");
        assert.equal(readFileSync(join(root, "a", "new", "n.txt"), "utf8"), "made\n");
        await dir.close();
        await location.dir.close();
        await assert.rejects(locate(start, ["a", "gone", "..", "..", "x"], { allowMissing: true }), {
          code: "ENOENT",
        });
      } finally {
        await start.close();
        rmSync(join(root, "a", "new"), { recursive: true, force: true });
      }
    });
  });
}
