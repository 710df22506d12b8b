#!/usr/bin/env node
// Bundles the built CLI (packages/nexo/dist/cli/main.js) into packages/nexo/bundle/ with esbuild.
// Why: resolving and compiling a few hundred small modules was most of `nexo agent`'s start-up
// time (the json-stream benchmark measures it against an empty node process). Code split at
// every dynamic import, so a command loads only what it uses. better-sqlite3 stays external
// (native addon); what the code loads by name with createRequire (pino-pretty; ajv and ajv-formats,
// on the first tool schema compiled) is never seen by esbuild, so the packed CLI ships those
// packages beside the bundle (scripts/pack-packages.mjs, CLI_RUNTIME_DEPENDENCIES). The bundle lives beside dist/ at the same depth, so `../package.json` still
// resolves from import.meta.url.
//
// zod's namespace re-exports every message locale (about half of zod's bytes); the bundle
// keeps English, the one zod configures and the only one nexo uses, since every command compiles
// zod before its first answer (`nexo app-server`'s first `initialize`).
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** Loads zod's locales barrel as a module that re-exports English only. */
const englishZodMessages = {
  name: "english-zod-messages",
  setup(builder) {
    builder.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: "js",
    }));
  },
};

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
  plugins: [englishZodMessages],
  logLevel: "warning",
});
