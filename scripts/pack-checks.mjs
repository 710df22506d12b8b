#!/usr/bin/env node
// What a staged package would load that it does not ship: the checks scripts/pack-packages.mjs
// runs before `npm pack`, so an import of an unpublished or undeclared package fails the pack, not
// a user's install.
//
//   undeclaredImports(dir, pkg)   bare imports and requires (`from "x"`, `import("x")`,
//                                 `require("x")`) in dir's .js/.mjs/.d.ts files: used on code that
//                                 was not bundled (the SDK's dist, the CLI's bin/).
//   undeclaredLoadsByName(dir, pkg)
//                                 only what is loaded through `createRequire`: a function bound to
//                                 `createRequire(…)` called with a string, or its `.resolve` (the
//                                 bundle's loads esbuild cannot see, since it leaves them alone:
//                                 pino-pretty, ajv). The bundle's static imports were already
//                                 resolved by esbuild, and its inlined libraries hold strings
//                                 that merely look like imports, so only these are checked there.
//
// Each returns "name (file)" strings; a Node built-in, a `node:` specifier, a relative path and a
// declared dependency (dependencies, peer, optional, or the package itself) pass.
//
// Run directly, `node scripts/pack-checks.mjs DIR PACKAGE_JSON [--by-name]` checks DIR against that
// package.json's declarations, prints what is undeclared and exits 1 if anything is.
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(["'])([^"'\n]+)\1/g;
/** `const load = createRequire(import.meta.url)` (esbuild may rename the import: createRequire2). */
const REQUIRE_BINDING = /\b(?:const|let|var)\s+([\w$]+)\s*=\s*createRequire\w*\s*\([^)]*\)/g;

/** The package name of a bare specifier ("zod/v4" → "zod", "@a/b/c" → "@a/b"), or undefined for a relative one. */
export function packageOf(specifier) {
  if (specifier.startsWith(".") || specifier.startsWith("/")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Specifiers passed as string literals to createRequire-made functions in `text`. */
function loadsByName(text) {
  const callers = [
    "createRequire\\w*\\s*\\([^)]*\\)",
    ...[...text.matchAll(REQUIRE_BINDING)].map((match) => `\\b${escapeRegExp(match[1])}`),
  ];
  const calls = new RegExp(
    `(?:${callers.join("|")})(?:\\s*\\.\\s*resolve)?\\s*\\(\\s*(["'])([^"'\\n]+)\\1`,
    "g",
  );
  return [...text.matchAll(calls)].map((match) => match[2]);
}

function staticImports(text) {
  return [...text.matchAll(SPECIFIER)].map((match) => match[2]);
}

function undeclared(dir, pkg, specifiersOf) {
  const declared = new Set([
    pkg.name,
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
    ...Object.keys(pkg.optionalDependencies ?? {}),
  ]);
  const builtins = new Set(builtinModules);
  const missing = new Set();
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
  for (const file of files) {
    if (!/\.(m?js|d\.ts)$/.test(file) || file.includes(`${sep}node_modules${sep}`)) continue;
    for (const specifier of specifiersOf(readFileSync(file, "utf8"))) {
      const name = packageOf(specifier);
      if (name === undefined || specifier.startsWith("node:") || builtins.has(name) || declared.has(name))
        continue;
      missing.add(`${name} (${relative(dir, file)})`);
    }
  }
  return [...missing];
}

export const undeclaredImports = (dir, pkg) => undeclared(dir, pkg, staticImports);
export const undeclaredLoadsByName = (dir, pkg) => undeclared(dir, pkg, loadsByName);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, manifest, flag] = process.argv.slice(2);
  if (dir === undefined || manifest === undefined) {
    process.stderr.write("usage: node scripts/pack-checks.mjs DIR PACKAGE_JSON [--by-name]\n");
    process.exit(2);
  }
  const pkg = JSON.parse(readFileSync(manifest, "utf8"));
  const missing = flag === "--by-name" ? undeclaredLoadsByName(dir, pkg) : undeclaredImports(dir, pkg);
  for (const line of missing) process.stdout.write(`${line}\n`);
  process.exit(missing.length > 0 ? 1 : 0);
}
