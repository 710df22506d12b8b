/**
 * store/db.ts's connection: opened with better-sqlite3's addon named by its path, so that the
 * `bindings` package (a search of candidate paths, kept loaded for the process's life) is never
 * loaded. This file's process opens SQLite only through openConnection.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { IN_MEMORY, openConnection } from "../../src/store/db.js";

test("opening a connection loads better-sqlite3's addon by its path, not through the bindings package", () => {
  const dir = mkdtempSync(join(tmpdir(), "nexo-store-db-"));
  try {
    for (const path of [IN_MEMORY, join(dir, "nexo.db")]) {
      const db = openConnection(path);
      assert.deepEqual(db.prepare("SELECT 1 + 1 AS two").get(), { two: 2 });
      db.close();
    }
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    assert.ok(
      loaded.some((file) => file.endsWith("better_sqlite3.node")),
      "better-sqlite3's addon is not loaded",
    );
    assert.deepEqual(
      loaded.filter((file) => /[\\/]node_modules[\\/](bindings|file-uri-to-path)[\\/]/.test(file)),
      [],
      "the bindings package was loaded",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
