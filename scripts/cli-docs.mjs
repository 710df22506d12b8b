#!/usr/bin/env node
// Writes docs/cli.md from the built CLI's definitions (packages/nexo/dist). `--check` only
// compares and exits 1 when the file is stale. Run `npm run build` first.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const { buildProgram } = await import(`${root}packages/nexo/dist/cli/program.js`);
const { renderCliReference } = await import(`${root}packages/nexo/dist/cli/reference.js`);
const text = renderCliReference(buildProgram({}));
const file = `${root}docs/cli.md`;
if (process.argv.includes("--check")) {
  const current = readFileSync(file, "utf8");
  if (current !== text) {
    process.stderr.write("docs/cli.md is stale: run `node scripts/cli-docs.mjs`\n");
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
