#!/usr/bin/env node
// Packs the two packages a user installs outside the clone into self-contained npm tarballs:
//
//   nexo-plugin-sdk-<v>.tgz  the SDK. Its dist imports the workspace package @nexo/wire, which is
//                            not on the npm registry: the pack copies wire's built dist into the
//                            SDK's dist/wire/ and rewrites every "@nexo/wire…" import (in the .js
//                            and the .d.ts alike) to a relative path there, so one copy of the wire
//                            classes serves the runtime and the types. wire's own dependency (zod)
//                            becomes the SDK's.
//   nexo-<v>.tgz             the CLI. bin/nexo runs bundle/ (scripts/bundle-cli.mjs: every
//                            dependency inlined but better-sqlite3, a native addon, and those loaded
//                            by name with createRequire: pino-pretty, ajv with ajv-formats, which
//                            the tool schemas load on their first compile, and prom-client, which
//                            the daemon loads with its first metric). better-sqlite3 is bundled *built*: the addon this
//                            clone's `npm install` compiled, without its install script, so installing
//                            the tarball needs no compiler and no download (building it from source
//                            takes minutes). That addon fits one platform and Node major: the package
//                            says which (os, cpu, engines), and npm refuses another. The SDK
//                            tarball rides along in sdk/, for `nexo plugin new --lang ts` and
//                            `nexo microapp new --lang ts`.
//
// Each package is staged in a temporary directory (the workspace's own package.json files and dist
// are never touched) and packed there with `npm pack`. Before packing, every bare import in the
// staged code must name a Node built-in or a declared dependency (scripts/pack-checks.mjs; in the
// CLI's bundle, what is loaded by name through createRequire), so an import of an unpublished
// package fails the pack, not the user's install. `npm pack` run inside packages/sdk or
// packages/nexo would ship the workspace dependencies: their prepack script refuses and points here.
//
// Usage: node scripts/pack-packages.mjs [--out DIR]   (default DIR: packed/ in the repository;
// `npm run package` builds first). Prints the two tarballs' paths.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { undeclaredImports, undeclaredLoadsByName } from "./pack-checks.mjs";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const WIRE = join(REPO, "packages", "wire");
const SDK = join(REPO, "packages", "sdk");
const NEXO = join(REPO, "packages", "nexo");
/** The CLI's dependencies that bundle/ does not inline (scripts/bundle-cli.mjs): shipped inside its tarball. */
const CLI_RUNTIME_DEPENDENCIES = ["better-sqlite3", "pino-pretty", "ajv", "ajv-formats", "prom-client"];
/** Of those, the native addon shipped built (see the header). */
const CLI_BUNDLED_NATIVE = "better-sqlite3";

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const writeJson = (file, value) => writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);

/** Every file under `dir` (recursively), as absolute paths. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Copies a built output directory without build bookkeeping and source maps (their sources are not shipped). */
function copyBuilt(from, to) {
  if (!existsSync(from)) throw new Error(`${from} is missing: run \`npm run build\` first`);
  cpSync(from, to, {
    recursive: true,
    filter: (source) => !/\.tsbuildinfo$|\.map$/.test(source),
  });
}

/** Fails when a staged file would load a package that is neither a Node built-in nor declared. */
function assertSelfContained(dir, pkg, check = undeclaredImports) {
  const missing = check(dir, pkg);
  if (missing.length > 0) {
    throw new Error(`${pkg.name} would import undeclared packages: ${missing.join(", ")}`);
  }
}

/** Drops the workspace-only "@nexo/source" condition (it points at src/, which is not shipped). */
function shippedExports(exports) {
  if (typeof exports !== "object" || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([condition]) => condition !== "@nexo/source")
      .map(([key, value]) => [key, shippedExports(value)]),
  );
}

/** `npm pack` of a staged directory into `out`; returns the tarball's path. */
function npmPack(dir, out) {
  const report = execFileSync("npm", ["pack", "--json", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return join(out, JSON.parse(report)[0].filename);
}

function packSdk(stage, out) {
  const dir = join(stage, "nexo-plugin-sdk");
  const sdk = readJson(join(SDK, "package.json"));
  const wire = readJson(join(WIRE, "package.json"));
  copyBuilt(join(SDK, "dist"), join(dir, "dist"));
  copyBuilt(join(WIRE, "dist"), join(dir, "dist", "wire"));
  cpSync(join(SDK, "README.md"), join(dir, "README.md"));

  // "@nexo/wire/schemas" → wire's exports["./schemas"].default → dist/wire/schemas/index.js
  const wireTarget = (specifier) => {
    const entry = wire.exports[`.${specifier.slice(wire.name.length)}`];
    if (entry === undefined) throw new Error(`${specifier} is not an export of ${wire.name}`);
    return join(dir, "dist", "wire", relative("dist", entry.default));
  };
  const wireSpecifier = /(["'])(@nexo\/wire(?:\/[\w./-]*)?)\1/g;
  for (const file of filesUnder(join(dir, "dist"))) {
    if (file.startsWith(join(dir, "dist", "wire") + sep) || !/\.(js|d\.ts)$/.test(file)) continue;
    const text = readFileSync(file, "utf8");
    const rewritten = text.replace(wireSpecifier, (_match, quote, specifier) => {
      const path = relative(dirname(file), wireTarget(specifier)).split(sep).join("/");
      return `${quote}${path.startsWith(".") ? path : `./${path}`}${quote}`;
    });
    if (rewritten !== text) writeFileSync(file, rewritten);
  }

  const { [wire.name]: _wire, ...ownDependencies } = sdk.dependencies;
  const { devDependencies: _dev, scripts: _scripts, ...rest } = sdk;
  const pkg = {
    ...rest,
    exports: shippedExports(sdk.exports),
    dependencies: { ...ownDependencies, ...wire.dependencies },
  };
  writeJson(join(dir, "package.json"), pkg);
  assertSelfContained(dir, pkg);
  return npmPack(dir, out);
}

/** The directory of package `name` as Node would find it from `dir` (exports maps aside). */
function installedPackage(dir, name) {
  for (let at = dir; at !== dirname(at); at = dirname(at)) {
    const candidate = join(at, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
  }
  throw new Error(`${name} is not installed (looked up from ${dir}): run \`npm install\``);
}

/**
 * Copies an installed package and, flat beside it, the packages it depends on (`seen`: name →
 * version). `transform` may rewrite the shipped manifest and give `keep(relativePath)` to choose
 * files. A package that would run an install script on the user's machine fails the pack: npm
 * rebuilds bundled dependencies.
 */
function copyPackageTree(from, nodeModules, transform, seen) {
  const pkg = readJson(join(from, "package.json"));
  if (seen.has(pkg.name)) {
    if (seen.get(pkg.name) !== pkg.version) {
      throw new Error(
        `two versions of ${pkg.name} (${seen.get(pkg.name)}, ${pkg.version}) cannot share one flat node_modules`,
      );
    }
    return;
  }
  seen.set(pkg.name, pkg.version);
  const { keep, ...manifest } = transform?.(pkg) ?? pkg;
  const { preinstall, install, postinstall } = manifest.scripts ?? {};
  if (
    preinstall ||
    install ||
    postinstall ||
    (manifest.gypfile !== false && existsSync(join(from, "binding.gyp")))
  ) {
    throw new Error(`${pkg.name} has an install step; it cannot be shipped inside the tarball as is`);
  }
  const to = join(nodeModules, pkg.name);
  cpSync(from, to, { recursive: true, filter: (source) => keep?.(relative(from, source)) ?? true });
  writeJson(join(to, "package.json"), manifest);
  for (const dependency of Object.keys(manifest.dependencies ?? {})) {
    copyPackageTree(installedPackage(from, dependency), nodeModules, undefined, seen);
  }
  for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) {
    let found;
    try {
      found = installedPackage(from, dependency);
    } catch {
      continue; // an optional dependency this machine did not install
    }
    copyPackageTree(found, nodeModules, undefined, seen);
  }
}

/**
 * better-sqlite3 as built here: its lib/ and the compiled addon, with no install script and no
 * binding.gyp (npm would run `node-gyp rebuild` for either), and only the dependency its lib loads.
 */
function builtNativeAddon(pkg) {
  const { scripts: _scripts, devDependencies: _dev, dependencies = {}, ...rest } = pkg;
  return {
    ...rest,
    gypfile: false,
    // npm packs a bundled dependency by its own "files": the addon must be listed.
    files: ["lib/", "build/Release/better_sqlite3.node"],
    dependencies: { bindings: dependencies.bindings },
    keep: (path) =>
      path === "" ||
      path === "package.json" ||
      /^(LICENSE|README)/.test(path) ||
      path === "lib" ||
      path.startsWith(`lib${sep}`) ||
      ["build", join("build", "Release"), join("build", "Release", "better_sqlite3.node")].includes(path),
  };
}

function packCli(stage, out, sdkTarball) {
  const dir = join(stage, "nexo");
  const nexo = readJson(join(NEXO, "package.json"));
  copyBuilt(join(NEXO, "bundle"), join(dir, "bundle"));
  // A startup snapshot loads only into the node binary that built it (bin/build-snapshot.mjs), so
  // the tarball ships the snapshots' scripts and the install builds the blobs with the user's node;
  // bin/nexo runs the ES module entry until they exist (an install with --ignore-scripts, a
  // failed build).
  for (const name of readdirSync(join(dir, "bundle", "snapshot"))) {
    if (!name.endsWith(".cjs")) rmSync(join(dir, "bundle", "snapshot", name));
  }
  cpSync(join(NEXO, "bin"), join(dir, "bin"), { recursive: true });
  mkdirSync(join(dir, "sdk"));
  cpSync(sdkTarball, join(dir, "sdk", basename(sdkTarball)));

  // The runtime dependencies travel inside the tarball, as installed here: installing it reads
  // nothing from a registry.
  const dependencies = {};
  const seen = new Map();
  for (const name of CLI_RUNTIME_DEPENDENCIES) {
    const from = installedPackage(NEXO, name);
    copyPackageTree(
      from,
      join(dir, "node_modules"),
      name === CLI_BUNDLED_NATIVE ? builtNativeAddon : undefined,
      seen,
    );
    dependencies[name] = readJson(join(from, "package.json")).version;
  }

  const major = Number(process.versions.node.split(".")[0]);
  const { devDependencies: _dev, scripts: _scripts, exports: _exports, ...rest } = nexo;
  const pkg = {
    ...rest,
    files: ["bin", "bundle", "sdk"],
    scripts: { postinstall: "node bin/build-snapshot.mjs --if-possible" },
    dependencies,
    bundleDependencies: CLI_RUNTIME_DEPENDENCIES,
    // The addon is built for this platform and Node major (its ABI): npm refuses any other.
    os: [process.platform],
    cpu: [process.arch],
    engines: { ...nexo.engines, node: `${nexo.engines.node} >=${major}.0.0 <${major + 1}.0.0` },
  };
  writeJson(join(dir, "package.json"), pkg);
  assertSelfContained(join(dir, "bin"), pkg);
  // The bundle's own static imports were resolved by esbuild; what it loads by name was not.
  assertSelfContained(join(dir, "bundle"), pkg, undeclaredLoadsByName);
  return npmPack(dir, out);
}

const { values } = parseArgs({ options: { out: { type: "string" } } });
const out = resolve(values.out ?? join(REPO, "packed"));
mkdirSync(out, { recursive: true });
const stage = mkdtempSync(join(tmpdir(), "nexo-pack-"));
try {
  const sdkTarball = packSdk(stage, out);
  const cliTarball = packCli(stage, out, sdkTarball);
  for (const tarball of [sdkTarball, cliTarball]) {
    process.stdout.write(`${tarball} (${Math.round(statSync(tarball).size / 1024)} KiB)\n`);
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
