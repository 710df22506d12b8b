#!/usr/bin/env node
// Runs every *.test.ts under packages/*/test and examples/ with Node's own test runner.
// Tests load TypeScript sources directly (tsx + the "@nexo/source" export condition), so no
// build is needed for in-process tests; tests that spawn the CLI use the built dist/. The example
// plugins are compiled first (scripts/build-examples.mjs), since every test runs them compiled.
// Usage: node scripts/run-tests.mjs [filter...]   (a filter is a substring of the file path)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const filters = process.argv.slice(2);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const files = ["packages", "examples"]
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) => walk(join(root, dir), []))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((flt) => f.includes(flt)))
  .sort();
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
// The example plugins run compiled, as the daemon runs them: compile them from the current sources.
const examples = spawnSync(process.execPath, [join(root, "scripts/build-examples.mjs")], {
  stdio: "inherit",
});
if (examples.status !== 0) process.exit(examples.status ?? 1);
const result = spawnSync(
  process.execPath,
  ["--conditions=@nexo/source", "--import", "tsx", "--test", "--test-reporter=spec", ...files],
  { cwd: root, stdio: "inherit", env: { ...process.env, NEXO_LOG: process.env.NEXO_LOG ?? "silent" } },
);
process.exit(result.status ?? 1);
