#!/usr/bin/env node
// Bundles the built CLI (packages/nexo/dist/cli/main.js) into packages/nexo/bundle/ with esbuild.
// Why: resolving and compiling a few hundred small modules was most of `nexo agent`'s start-up
// time (the json-stream benchmark measures it against an empty node process). Code split at
// every dynamic import, so a command loads only what it uses. better-sqlite3 stays external
// (native addon). The bundle lives beside dist/ at the same depth, so `../package.json` still
// resolves from import.meta.url.
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const nexo = fileURLToPath(new URL("../packages/nexo/", import.meta.url));
const outdir = `${nexo}bundle`;
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: `${nexo}dist/cli/main.js` },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3"],
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
  banner: {
    js: "import { createRequire as __nexoCreateRequire } from 'node:module'; const require = __nexoCreateRequire(import.meta.url);",
  },
  sourcemap: "linked",
  logLevel: "warning",
});
