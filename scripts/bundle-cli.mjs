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
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
asciiComments(outdir);

/**
 * Makes every chunk ASCII. esbuild escapes non-ASCII characters in strings, template literals,
 * regular expressions and identifiers (its default `charset: "ascii"`), but keeps the JSDoc
 * comments of class members as written, so one em dash in one of them made V8 hold that whole
 * chunk's source as two-byte text, twice its size, for the process's life (issue 15, the idle
 * daemon's memory: ~1.4 MB of the chunks `nexo start` loads). What is left outside ASCII is
 * therefore comment text; each UTF-16 unit of it becomes one ASCII character, so every column
 * of the source map stays right (the map's sourcesContent keeps the original text).
 */
function asciiComments(dir) {
  const ascii = { "\u2014": "-", "\u2013": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"' };
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".js")) continue;
    const text = readFileSync(`${dir}/${name}`, "utf8");
    if (!/[\u0080-\uffff]/.test(text)) continue;
    writeFileSync(
      `${dir}/${name}`,
      text.replace(/[\u0080-\uffff]/g, (unit) => ascii[unit] ?? "?"),
    );
  }
}
