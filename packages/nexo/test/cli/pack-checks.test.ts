/**
 * The pack's self-containment check (scripts/pack-checks.mjs, run by scripts/pack-packages.mjs
 * before `npm pack`): an undeclared package is named whether it is imported or loaded by name
 * through createRequire, which esbuild leaves in the bundle unresolved.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../../../scripts/pack-checks.mjs", import.meta.url));
const BUNDLE = fileURLToPath(new URL("../../bundle", import.meta.url));

function check(dir: string, pkg: object, byName: boolean): { code: number | null; named: string[] } {
  const manifest = join(mkdtempSync(join(tmpdir(), "nexo-pack-manifest-")), "package.json");
  writeFileSync(manifest, JSON.stringify(pkg));
  const run = spawnSync(process.execPath, [SCRIPT, dir, manifest, ...(byName ? ["--by-name"] : [])], {
    encoding: "utf8",
  });
  assert.equal(run.stderr, "");
  const named = run.stdout.split("\n").filter((line) => line !== "");
  return { code: run.status, named: named.map((line) => line.replace(/ \(.*\)$/, "")).sort() };
}

function staged(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "nexo-pack-staged-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const LOADS = [
  'import { createRequire as createRequire2 } from "node:module";',
  "const load = createRequire2(import.meta.url);",
  'const pad = load("left-pad");',
  'const fs = load("node:fs"), path = load("path"), mine = load("./mine.js");',
  'const where = createRequire2(import.meta.url).resolve("@scope/thing/sub");',
  'const pretty = createRequire2(import.meta.url)( "pino-pretty" );',
  'const text = "import(\\"not-a-load\\")";',
].join("\n");

describe("pack checks", () => {
  test("loads by name through createRequire: bound, called directly and resolved", () => {
    const dir = staged({ "chunk-A.js": LOADS, "deep/chunk-B.mjs": 'const r = createRequire(x); r("zod");' });
    assert.deepEqual(check(dir, { name: "nexo" }, true), {
      code: 1,
      named: ["@scope/thing", "left-pad", "pino-pretty", "zod"],
    });
    const declared = { name: "nexo", dependencies: { "left-pad": "1", "pino-pretty": "1" } };
    assert.deepEqual(
      check(dir, { ...declared, optionalDependencies: { "@scope/thing": "1", zod: "1" } }, true),
      {
        code: 0,
        named: [],
      },
    );
  });

  test("static imports and requires, outside node_modules", () => {
    const dir = staged({
      "bin/nexo.js":
        'import "node:fs";\nimport { z } from "zod";\nconst y = require("yaml");\nimport("./local.js");',
      "node_modules/dep/index.js": 'import "undeclared-inside-a-shipped-dependency";',
    });
    assert.deepEqual(check(dir, { name: "nexo" }, false), { code: 1, named: ["yaml", "zod"] });
    assert.deepEqual(check(dir, { name: "nexo", peerDependencies: { zod: "3", yaml: "2" } }, false), {
      code: 0,
      named: [],
    });
  });

  test("the CLI's bundle loads pino-pretty, ajv, ajv-formats and better-sqlite3 by name", () => {
    const { code, named } = check(BUNDLE, { name: "nexo" }, true);
    assert.equal(code, 1);
    for (const name of ["ajv", "ajv-formats", "better-sqlite3", "pino-pretty"])
      assert.ok(named.includes(name), name);
  });
});
