/**
 * The docs must stand alone: a reader of the repository does not have the specs or the research
 * notes they were written from, so no page may send them there (issue 14.11). Pages say the facts
 * in their own words instead.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function markdownFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) markdownFiles(path, out);
    else if (name.endsWith(".md")) out.push(path);
  }
  return out;
}

/** Paths that only exist outside the repository, where the team keeps its specs and notes. */
const OUTSIDE_PATHS = /(?:shared\/)?(?:specs\/[\w-]+\.txt|notes\/[\w-]+\.md)/;

test("no README or doc page points at specs or notes outside the repository", () => {
  const pages = [
    join(root, "README.md"),
    ...markdownFiles(join(root, "docs")),
    ...["packages", "examples"].flatMap((dir) => markdownFiles(join(root, dir))),
  ];
  const offenders = pages.flatMap((page) =>
    readFileSync(page, "utf8")
      .split("\n")
      .map((line, i) => ({ line, at: `${relative(root, page)}:${i + 1}` }))
      .filter(({ line }) => OUTSIDE_PATHS.test(line))
      .map(({ line, at }) => `${at}: ${line.trim()}`),
  );
  assert.deepEqual(offenders, []);
});

test("no page promises a feature as coming soon", () => {
  const pages = [
    join(root, "README.md"),
    ...markdownFiles(join(root, "docs")),
    ...markdownFiles(join(root, "packages")),
  ];
  const offenders = pages.filter((page) => /coming soon/i.test(readFileSync(page, "utf8")));
  assert.deepEqual(
    offenders.map((p) => relative(root, p)),
    [],
  );
});
