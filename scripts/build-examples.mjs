#!/usr/bin/env node
// Compiles the TypeScript example plugins (examples/plugins/*/plugin.ts, and the loopback
// channel's terminal chat) into one JavaScript file each, dist/<name>.js, that runs with plain
// `node`. Part of the root build (`npm run build`, which `npm install` runs), and run by
// scripts/run-tests.mjs so tests never run a stale file.
// Why compiled: under the TypeScript loader (`node --import tsx plugin.ts`) each plugin carried a
// second process (tsx's esbuild service), more memory and a slower start; two such grandchildren
// were once left behind after a SIGTERM. Each file bundles nexo-plugin-sdk and @nexo/wire from
// their sources (the "@nexo/source" export condition), so it needs no node_modules at run time:
// copied elsewhere, or run in the bubblewrap sandbox, the example still works.
// Usage: node scripts/build-examples.mjs [example-name ...]   (default: all)
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const examples = fileURLToPath(new URL("../examples/plugins/", import.meta.url));
const only = process.argv.slice(2);

const entries = readdirSync(examples, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && (only.length === 0 || only.includes(entry.name)))
  .flatMap((entry) =>
    ["plugin.ts", "chat.ts"]
      .map((file) => join(examples, entry.name, file))
      .filter((file) => existsSync(file))
      .map((file) => ({ dir: join(examples, entry.name), file })),
  );

await Promise.all(
  entries.map(({ dir, file }) =>
    build({
      entryPoints: [file],
      outdir: join(dir, "dist"),
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      conditions: ["@nexo/source"],
      // Bundled CommonJS dependencies still call require() for Node's built-ins.
      banner: {
        js: "import { createRequire as __nexoCreateRequire } from 'node:module'; const require = __nexoCreateRequire(import.meta.url);",
      },
      logLevel: "warning",
    }),
  ),
);
