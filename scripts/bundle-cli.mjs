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
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { compactBundle } from "./bundle-compact.mjs";

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

/** A dynamic `import("node:…")` becomes a require() of the built-in (see bundleSnapshotEntries). */
const builtinsRequired = {
  name: "builtins-required",
  setup(builder) {
    builder.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === "dynamic-import" ? { path: args.path, namespace: "builtin-required" } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: "builtin-required" }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});\n`,
      loader: "js",
    }));
  },
};

/**
 * In the ES module bundle, nexo's own static imports of Node built-ins become require()s, through
 * the `require` every chunk's banner makes. An ES module import of a built-in builds the module's
 * namespace, which reads every export, lazy getters included: `node:crypto`'s `webcrypto`,
 * `node:util`'s `parseArgs` and `MIMEType`, `node:buffer`'s `File` each load Node internals
 * (internal/crypto/webcrypto, internal/util/parse_args, internal/mime, internal/file) that the
 * idle daemon never uses, kept for the process's life (docs/performance.md, "Seventh pass (c)" and
 * "Eighth pass (a)"). A require() returns `module.exports` and reads nothing, and the import's
 * names become a destructuring of it: each reads the one property it names, once, as the import
 * did. The rewrite is textual, on the compiled files (packages' dist/), whose imports tsc prints one
 * a line at the top; the lines after the first other statement are left alone (the scaffolders'
 * templates hold import lines in strings).
 *
 * Tried and dropped: resolving each built-in to a module of its own for esbuild (a CommonJS one
 * gets esbuild's interop, a copy of the built-in's exports as getters in every importing file; an
 * ES module one a chunk of its own per built-in): the first cost more than it saved, the second
 * saved nothing measurable. `node:module` stays an import (the banner imports it). Dependencies'
 * imports are left as they are, but uuid's (below).
 */
function requireBuiltins(text) {
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === "" || /^(\/\/|\/\*| \*|\*\/)/.test(line)) continue;
    if (!line.startsWith("import ")) break;
    const match = /^import (.+) from (["'])(node:[^"']+)\2;$/.exec(line);
    if (match === null || match[3] === "node:module") continue;
    lines[i] = requireOf(match[1], match[3], line);
  }
  return lines.join("\n");
}

const requireHere = createRequire(import.meta.url);

/** `import CLAUSE from "SPECIFIER";` as one `const` statement per binding form. */
function requireOf(clause, specifier, line) {
  const request = `require(${JSON.stringify(specifier)})`;
  const named = /^(?:([\w$]+), )?\{([^}]*)\}$/.exec(clause);
  const whole = /^(?:\* as )?([\w$]+)$/.exec(clause);
  if (named !== null) {
    const names = named[2]
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "")
      .map((name) => name.replace(/^([\w$]+) as ([\w$]+)$/, "$1: $2"));
    // `default` would read `module.exports.default`, not the import's `module.exports`.
    if (!names.every((name) => /^[\w$]+(: [\w$]+)?$/.test(name) && !/^default\b/.test(name)))
      throw new Error(`cannot rewrite \`${line}\``);
    // An import of a name the built-in lacks fails to link; a destructuring would give undefined.
    const builtin = requireHere(specifier);
    const missing = names.map((name) => name.split(":")[0]).filter((name) => !(name in builtin));
    if (missing.length > 0) throw new Error(`${specifier} has no ${missing.join(", ")}: \`${line}\``);
    const value = named[1] === undefined ? request : named[1];
    return `${named[1] === undefined ? "" : `const ${named[1]} = ${request}; `}const { ${names.join(", ")} } = ${value};`;
  }
  if (whole !== null) return `const ${whole[1]} = ${request};`;
  throw new Error(`cannot rewrite \`${line}\``);
}

/**
 * Every compiled file of nexo's packages, and uuid's (its random source imports `node:crypto`),
 * with their imports of built-ins rewritten (above). The two files yamlBesideTheBundle loads
 * (listed before this plugin, so esbuild takes its contents) import no built-in but `node:module`.
 */
const NEXO_AND_UUID_FILES =
  /[\\/](?:packages[\\/](?:[^\\/]+[\\/])+dist|node_modules[\\/]uuid[\\/]dist-node)[\\/].+\.js$/;
const builtinsRequiredByImports = {
  name: "builtins-required-by-imports",
  setup(builder) {
    builder.onLoad({ filter: NEXO_AND_UUID_FILES }, (args) => ({
      contents: requireBuiltins(readFileSync(args.path, "utf8")),
      loader: "js",
    }));
  },
};

/**
 * Three top-level requires of the logger's dependencies, each moved to the one place that uses it,
 * so that a process that never uses them does not load them (docs/performance.md, "Eighth pass
 * (a)"). nexo logs through a synchronous pino destination (log.ts) or pino-pretty, never through a
 * transport, yet loading pino loaded `thread-stream` (a transport's worker; it loads
 * `worker_threads` and `assert`), `worker_threads` for `isMainThread` (read only for an
 * asynchronous destination) and sonic-boom's `assert` (one check when a destination is closed).
 * Each edit is the exact text of the package's file; the build fails if one is not found once,
 * e.g. after an upgrade of the package.
 */
const DEFERRED_REQUIRES = [
  {
    file: /[\\/]node_modules[\\/]pino[\\/]lib[\\/]transport\.js$/,
    edits: [
      ["const ThreadStream = require('thread-stream')\n", ""],
      ["new ThreadStream({", "new (require('thread-stream'))({"],
    ],
  },
  {
    file: /[\\/]node_modules[\\/]pino[\\/]lib[\\/]tools\.js$/,
    edits: [
      ["const { isMainThread } = require('worker_threads')\n", ""],
      ["if (!opts.sync && isMainThread) {", "if (!opts.sync && require('worker_threads').isMainThread) {"],
    ],
  },
  {
    file: /[\\/]node_modules[\\/]sonic-boom[\\/]index\.js$/,
    edits: [
      ["const assert = require('assert')\n", ""],
      ["  assert(typeof sonic.fd === 'number',", "  require('assert')(typeof sonic.fd === 'number',"],
    ],
  },
];

const requiresOnUse = {
  name: "requires-on-use",
  setup(builder) {
    for (const { file, edits } of DEFERRED_REQUIRES)
      builder.onLoad({ filter: file }, (args) => {
        let text = readFileSync(args.path, "utf8");
        for (const [from, to] of edits) {
          if (text.split(from).length !== 2)
            throw new Error(`${args.path} no longer has \`${from.trim()}\` once`);
          text = text.replace(from, to);
        }
        return { contents: text, loader: "js" };
      });
  },
};

/**
 * better-sqlite3 as a constructor that loads the real module on its first call (see
 * bundleSnapshotEntries): `new Database(...)` gets the real database, whose methods and types are
 * the module's own. Only the default export is used (store/db.ts).
 */
const sqliteAtFirstOpen = {
  name: "sqlite-at-first-open",
  setup(builder) {
    builder.onResolve({ filter: /^better-sqlite3$/ }, () => ({
      path: "better-sqlite3",
      namespace: "sqlite-at-first-open",
    }));
    builder.onLoad({ filter: /.*/, namespace: "sqlite-at-first-open" }, () => ({
      contents: `const { createRequire } = require("node:module");
let loaded;
module.exports = function Database(...args) {
  loaded ??= createRequire(globalThis.__nexoBundleUrl)("better-sqlite3");
  return new loaded(...args);
};
`,
      loader: "js",
    }));
  },
};

/**
 * config/yaml-library.ts loads the yaml package through require() and lets it go after use, so
 * that an idle daemon does not keep it (its header says why). In the ES module bundle it loads
 * bundle/yaml.cjs, the package in one CommonJS file (one file to read and compile at each load,
 * where the package itself is ~40): this plugin points the module's one require at it. The
 * startup snapshots' scripts use it too: their `import.meta.url` is bundle/main.js.
 */
const yamlBesideTheBundle = {
  name: "yaml-beside-the-bundle",
  setup(builder) {
    builder.onLoad({ filter: /[\\/]config[\\/]yaml-library\.js$/ }, (args) => ({
      contents: pointYamlRequest(readFileSync(args.path, "utf8"), "./yaml.cjs"),
      loader: "js",
    }));
    // config/toml-source.ts loads smol-toml the same way, from bundle/smol-toml.cjs.
    builder.onLoad({ filter: /[\\/]config[\\/]toml-source\.js$/ }, (args) => ({
      contents: pointRequest(
        readFileSync(args.path, "utf8"),
        'const TOML_REQUEST = "smol-toml";',
        "TOML_REQUEST",
        "./smol-toml.cjs",
      ),
      loader: "js",
    }));
  },
};

/** The module's text with its require target replaced; fails the build if the line moved. */
function pointYamlRequest(text, request) {
  return pointRequest(text, 'const YAML_REQUEST = "yaml";', "YAML_REQUEST", request);
}

function pointRequest(text, line, name, request) {
  if (!text.includes(line)) throw new Error(`a bundled module no longer has \`${line}\``);
  return text.replace(line, `const ${name} = ${JSON.stringify(request)};`);
}

/**
 * better-sqlite3 in the ES module bundle: required through createRequire rather than imported.
 * An `import` of a CommonJS package makes Node load its CommonJS export lexer (cjs-module-lexer)
 * to find the package's named exports, and keep it with its state for the process's life; a
 * require() needs none of it, and the bundle only ever used the default export, which is
 * `module.exports` either way (store/db.ts).
 */
const sqliteRequired = {
  name: "sqlite-required",
  setup(builder) {
    builder.onResolve({ filter: /^better-sqlite3$/ }, () => ({
      path: "better-sqlite3",
      namespace: "sqlite-required",
    }));
    builder.onLoad({ filter: /.*/, namespace: "sqlite-required" }, () => ({
      contents:
        'import { createRequire } from "node:module";\nexport default createRequire(import.meta.url)("better-sqlite3");\n',
      loader: "js",
    }));
  },
};

/**
 * `nexo start`'s daemon is a build of its own: bundle/daemon-start.js and its `daemon-…` chunks,
 * which main.js imports where it starts the daemon (cli/main.ts's `import("./start.js")`). In the
 * build of every command, code is split at every dynamic import of every command, so the modules
 * the daemon loads at boot were cut into 67 files by what other commands share of them; built
 * alone, they are 27. Each ES module costs the process for its life (its module record, the
 * loader's entries, the bindings of its imports and exports): 60 more small modules added ~0.5 MB
 * to the idle daemon, and the daemon built apart reads ~0.6 MB less (docs/performance.md, "Ninth
 * pass (a)"). `nexo start` with flags the fast start leaves to commander, and every other command,
 * still run the daemon's code from the main build.
 *
 * One module instance per process: what main.js loads before the daemon starts must not be built
 * again into the daemon's files. That is the secrets module (secrets/known.ts keeps the values
 * captured at start-up, which every redaction reads), so it is a build of its own, bundle/secrets.js
 * in one file, which both builds import. (An entry point of the main build, it came in 4 files:
 * secrets.js re-exported two shared chunks, which imported esbuild's helpers' chunk; bundle/
 * daemon-main.js, which loads no other file of the main build, would load all four.) The build
 * fails if any other module is in both (then it needs the same treatment) or if a build imports a
 * name bundle/secrets.js does not export.
 */
const DAEMON_ENTRY = "daemon-start";
const daemonApart = {
  name: "daemon-apart",
  setup(builder) {
    builder.onResolve({ filter: /^\.\/start\.js$/ }, (args) =>
      args.kind === "dynamic-import" && args.importer === `${nexo}dist/cli/start-plain.js`
        ? { path: `./${DAEMON_ENTRY}.js`, external: true }
        : undefined,
    );
  },
};

/**
 * `nexo start`'s way into the daemon (bin/nexo runs it for `start`): bundle/daemon-main.js, a
 * second entry of the daemon's build (cli/daemon-main.ts). A plain `nexo start` through bin/nexo.js
 * loaded 7 ES modules of the main build before the daemon's (bin/nexo.js, main.js, the secrets
 * module's three files, log-format's, the fast start's); this entry holds the fast start, start-up and the shared
 * start branch itself, and imports the secrets module from bundle/secrets.js like the rest of the
 * daemon's build. What its
 * fast start declines goes to bundle/main.js (external here, never built into the daemon's files).
 * Its dynamic import of start.js is the daemon's entry, bundle/daemon-start.js.
 */
const DAEMON_MAIN = "daemon-main";
/**
 * The modules bundle/daemon-main.js may hold although main.js loads them too: when its fast start
 * declines a launch it has evaluated them and then loads main.js, which evaluates its own copies.
 * Each is functions and constant tables only, no state a second instance could disagree with
 * (the secrets module, which has some, comes from bundle/secrets.js for both).
 */
const DAEMON_MAIN_MODULES = ["daemon-main", "start-plain", "start-fast", "start-up", "launcher-env"]
  .map((name) => `packages/nexo/dist/cli/${name}.js`)
  .concat("packages/nexo/dist/log-format.js");
/**
 * Start-up's logger (cli/start-up.ts logs a warning when the secrets cannot be cleared from
 * /proc/<pid>/environ) is the main build's log chunk in daemon-main.js too, as it is in main.js:
 * built into the daemon's files, log.js would be an entry point of its own there and take itself
 * and pino out of the boot chunk (bootInOneChunk).
 */
function logFromMainBuild(mainMeta) {
  const [output] =
    Object.entries(mainMeta.outputs).find(([, meta]) => meta.entryPoint?.endsWith("dist/log.js")) ?? [];
  if (output === undefined) throw new Error("the main build has no chunk of its own for log.js");
  return {
    name: "log-from-main-build",
    setup(builder) {
      builder.onResolve({ filter: /^\.\.\/log\.js$/ }, (args) =>
        args.kind === "dynamic-import" && args.importer === `${nexo}dist/cli/start-up.js`
          ? { path: `./${output.split("/").pop()}`, external: true }
          : undefined,
      );
    },
  };
}

const mainFromMainBuild = {
  name: "main-from-main-build",
  setup(builder) {
    builder.onResolve({ filter: /^\.\/main\.js$/ }, (args) =>
      args.importer === `${nexo}dist/cli/${DAEMON_MAIN}.js`
        ? { path: "./main.js", external: true }
        : undefined,
    );
  },
};
const secretsOfTheirOwn = {
  name: "secrets-from-main-build",
  setup(builder) {
    builder.onResolve({ filter: /[\\/]secrets[\\/][\w-]+\.js$/ }, (args) => {
      const secrets = `${nexo}dist/secrets/`;
      if (!resolve(args.resolveDir, args.path).startsWith(secrets) || args.importer.startsWith(secrets))
        return undefined;
      return { path: "./secrets.js", external: true };
    });
  },
};

/**
 * The daemon's boot code in one chunk. esbuild puts two modules in the same chunk when the same
 * entry points reach them, and with splitting every dynamically imported module is an entry point
 * of its own. Everything `nexo start` evaluates at boot is what cli/start-run.ts reaches through
 * static imports, but the modules the daemon imports later (the first session's engine, the
 * AppServer door, the MCP and NATS clients, the providers' SDKs, ...) each reach a different part
 * of it, so the boot code came in 23 files, 10 of them under 2 KB, where each ES module costs the
 * process for its life (its record, the loader's entries, the bindings of its imports and exports,
 * and the `require` each chunk's banner makes: "Ninth pass (a)" measured ~8 KB a module). This
 * plugin makes every module the daemon imports dynamically after boot also import start-run.js,
 * which has been evaluated by then (the added import does nothing at run time): every module
 * start-run reaches is then reached by the same entry points, and esbuild builds them into one
 * chunk. Left alone: the modules start.js imports dynamically itself (start-heap, which sets V8's
 * heap flags before start-run loads, and start-run), and those start-run also reaches statically
 * (boot code already), and so are daemon-main's (DAEMON_MAIN). Which modules are imported dynamically comes from a first build of the
 * daemon (`firstMeta`, not written). The same modules are evaluated at boot, and no module is in
 * two chunks (esbuild never copies one; checkDaemonApart still holds).
 */
function bootInOneChunk(firstMeta) {
  const startJs = `${nexo}dist/cli/start.js`;
  const starts = new Set([startJs, `${nexo}dist/cli/${DAEMON_MAIN}.js`, `${nexo}dist/cli/start-plain.js`]);
  const startRun = `${nexo}dist/cli/start-run.js`;
  const inputs = new Map(Object.entries(firstMeta.inputs).map(([input, meta]) => [resolve(input), meta]));
  // What start-run reaches through static imports: evaluated at boot, left as it is.
  const boot = new Set();
  const visit = (file) => {
    if (boot.has(file) || !inputs.has(file)) return;
    boot.add(file);
    for (const i of inputs.get(file).imports)
      if (i.kind !== "dynamic-import" && !i.external) visit(resolve(i.path));
  };
  visit(startRun);
  const lateTargets = new Set();
  for (const [input, { imports }] of inputs) {
    if (starts.has(input)) continue;
    for (const i of imports)
      if (i.kind === "dynamic-import" && !i.external && !boot.has(resolve(i.path)))
        lateTargets.add(resolve(i.path));
  }
  if (lateTargets.size === 0) throw new Error("the daemon's build imports nothing dynamically after boot");
  return {
    name: "boot-in-one-chunk",
    setup(builder) {
      builder.onLoad({ filter: /\.m?js$/ }, (args) => {
        if (!lateTargets.has(args.path)) return undefined;
        // The text the other plugins would have loaded: nexo's compiled files with their imports
        // of built-ins rewritten (builtinsRequiredByImports), a dependency's as it is.
        const text = readFileSync(args.path, "utf8");
        const contents = NEXO_AND_UUID_FILES.test(args.path) ? requireBuiltins(text) : text;
        return { contents: `import ${JSON.stringify(startRun)};\n${contents}`, loader: "js" };
      });
    },
  };
}

const nexo = fileURLToPath(new URL("../packages/nexo/", import.meta.url));
const outdir = `${nexo}bundle`;
rmSync(outdir, { recursive: true, force: true });
const esModules = {
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
  metafile: true,
  logLevel: "warning",
};
const plugins = [
  englishZodMessages,
  yamlBesideTheBundle,
  sqliteRequired,
  builtinsRequiredByImports,
  requiresOnUse,
];
const main = await build({
  ...esModules,
  entryPoints: { main: `${nexo}dist/cli/main.js` },
  plugins: [daemonApart, secretsOfTheirOwn, ...plugins],
});
const secrets = await build({
  ...esModules,
  splitting: false,
  entryPoints: { secrets: `${nexo}dist/secrets/index.js` },
  plugins,
});
const daemonOptions = {
  ...esModules,
  entryPoints: {
    [DAEMON_ENTRY]: `${nexo}dist/cli/start.js`,
    [DAEMON_MAIN]: `${nexo}dist/cli/${DAEMON_MAIN}.js`,
  },
  chunkNames: "daemon-[name]-[hash]",
};
// The first build only finds the modules the daemon imports dynamically (bootInOneChunk).
const daemonFirst = await build({
  ...daemonOptions,
  write: false,
  plugins: [secretsOfTheirOwn, mainFromMainBuild, logFromMainBuild(main.metafile), ...plugins],
});
const daemon = await build({
  ...daemonOptions,
  plugins: [
    secretsOfTheirOwn,
    mainFromMainBuild,
    logFromMainBuild(main.metafile),
    bootInOneChunk(daemonFirst.metafile),
    ...plugins,
  ],
});
checkDaemonApart(main.metafile, daemon.metafile, secrets.metafile);
await build({
  entryPoints: { yaml: "yaml", "smol-toml": "smol-toml" },
  absWorkingDir: nexo,
  outdir,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
});
asciiComments(outdir);
asciiComments(outdir, ".cjs");
// Comments and indentation out of the chunks, every line kept where it is (bundle-compact.mjs).
await compactBundle(outdir, ".js");
await compactBundle(outdir, ".cjs");
await bundleSnapshotEntries();
// The blobs: made from those scripts by the same program an installed package runs.
execFileSync(process.execPath, [`${nexo}bin/build-snapshot.mjs`], { stdio: "inherit" });

/**
 * The startup snapshots' scripts (cli/snapshot-start.ts), one per command that starts from one:
 * bundle/snapshot/<command>.cjs. `node --build-snapshot` runs a single CommonJS script that may
 * require Node's built-in modules only, so: no splitting, every dynamic import inlined (a
 * snapshot's script has no ES module loader, not even for `import("node:zlib")`), and
 * better-sqlite3, a native addon no snapshot can hold, loaded on the store's first open from
 * where the package is found at start. `import.meta.url` reads `globalThis.__nexoBundleUrl`,
 * which the script sets to bundle/main.js beside it (what the ES module bundle's modules see) and
 * the snapshot's main sets again at start, from the blob's path. Whitespace is left out: V8 keeps
 * a script's whole source in the heap, so every byte of it is in the blob and read at each start.
 */
async function bundleSnapshotEntries() {
  // Only `nexo agent`: an AppServer snapshot (its door cannot be evaluated at build time, the daemon
  // config creates a net.BlockList) answered `initialize` later than the ES module fast start,
  // 86 against 55 ms, since deserializing its 8 MB costs more than the fast start's few chunks
  // (docs/performance.md, "Starting from a startup snapshot").
  const entries = { agent: "snapshot-agent" };
  await build({
    entryPoints: Object.fromEntries(
      Object.entries(entries).map(([command, file]) => [command, `${nexo}dist/cli/${file}.js`]),
    ),
    outdir: `${outdir}/snapshot`,
    outExtension: { ".js": ".cjs" },
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    define: { "import.meta.url": "globalThis.__nexoBundleUrl" },
    banner: {
      js: 'globalThis.__nexoBundleUrl = require("node:url").pathToFileURL(require("node:path").join(__dirname, "..", "main.js")).href;',
    },
    minifyWhitespace: true,
    charset: "ascii",
    sourcemap: "linked",
    plugins: [englishZodMessages, builtinsRequired, sqliteAtFirstOpen, yamlBesideTheBundle],
    logLevel: "warning",
  });
  asciiComments(`${outdir}/snapshot`, ".cjs");
}

/**
 * Makes every chunk ASCII. esbuild escapes non-ASCII characters in strings, template literals,
 * regular expressions and identifiers (its default `charset: "ascii"`), but keeps the JSDoc
 * comments of class members as written, so one em dash in one of them made V8 hold that whole
 * chunk's source as two-byte text, twice its size, for the process's life (issue 15, the idle
 * daemon's memory: ~1.4 MB of the chunks `nexo start` loads). What is left outside ASCII is
 * therefore comment text; each UTF-16 unit of it becomes one ASCII character, so every column
 * of the source map stays right (the map's sourcesContent keeps the original text).
 */
function asciiComments(dir, extension = ".js") {
  const ascii = { "\u2014": "-", "\u2013": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"' };
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(extension)) continue;
    const text = readFileSync(`${dir}/${name}`, "utf8");
    if (!/[\u0080-\uffff]/.test(text)) continue;
    writeFileSync(
      `${dir}/${name}`,
      text.replace(/[\u0080-\uffff]/g, (unit) => ascii[unit] ?? "?"),
    );
  }
}

/**
 * Fails the build unless the daemon's build, as main.js loads it (bundle/daemon-start.js and all it
 * imports), shares no module with what main.js loads before it (main.js and the shared start
 * branch, with their static imports); bundle/daemon-main.js holds no other module of main.js's than
 * DAEMON_MAIN_MODULES and imports the rest of the daemon through daemon-start.js; and the daemon's
 * build imports from bundle/secrets.js only names it exports (see DAEMON_ENTRY, DAEMON_MAIN).
 */
function checkDaemonApart(mainMeta, daemonMeta, secretsMeta) {
  const outputs = mainMeta.outputs;
  const entryOutput = (entry, meta = mainMeta) => {
    const found = Object.keys(meta.outputs).find((file) => meta.outputs[file].entryPoint?.endsWith(entry));
    if (found === undefined) throw new Error(`the build has no output for ${entry}`);
    return found;
  };
  const startPlain = entryOutput("dist/cli/start-plain.js");
  if (!outputs[startPlain].imports.some((i) => i.path === `./${DAEMON_ENTRY}.js` && i.external))
    throw new Error(
      `${startPlain} does not import ./${DAEMON_ENTRY}.js: cli/start-plain.ts's import of ./start.js moved`,
    );
  /** The modules of `files` and of the files they import (statically, or with `dynamic` too). */
  const reached = (meta, files, dynamic) => {
    const seen = new Set();
    const visit = (file) => {
      if (seen.has(file) || meta.outputs[file] === undefined) return;
      seen.add(file);
      for (const i of meta.outputs[file].imports)
        if (i.kind === "import-statement" || (dynamic && i.kind === "dynamic-import")) visit(i.path);
    };
    for (const file of files) visit(file);
    return new Set([...seen].flatMap((file) => Object.keys(meta.outputs[file].inputs)));
  };
  const before = reached(mainMeta, [entryOutput("dist/cli/main.js"), startPlain], false);
  const daemonStart = entryOutput("dist/cli/start.js", daemonMeta);
  const twice = [...reached(daemonMeta, [daemonStart], true)].filter((input) => before.has(input));
  if (twice.length > 0)
    throw new Error(
      `modules in both main.js's start and the daemon's build (two instances): ${twice.join(", ")}`,
    );
  const daemonMain = entryOutput(`dist/cli/${DAEMON_MAIN}.js`, daemonMeta);
  const ownOfMain = [...reached(daemonMeta, [daemonMain], false)].filter(
    (input) => before.has(input) && !DAEMON_MAIN_MODULES.includes(input),
  );
  if (ownOfMain.length > 0)
    throw new Error(`${daemonMain} holds modules main.js loads too (two instances): ${ownOfMain.join(", ")}`);
  if (
    !daemonMeta.outputs[daemonMain].imports.some((i) => i.path === daemonStart && i.kind === "dynamic-import")
  )
    throw new Error(
      `${daemonMain} does not import ${daemonStart}: cli/start-plain.ts's import of ./start.js moved`,
    );
  const exported = new Set(secretsMeta.outputs[entryOutput("dist/secrets/index.js", secretsMeta)].exports);
  const files = [mainMeta, daemonMeta].flatMap((meta) => Object.keys(meta.outputs));
  for (const file of files.filter((name) => name.endsWith(".js"))) {
    for (const match of readFileSync(file, "utf8").matchAll(
      /import\s*\{([^}]*)\}\s*from\s*["']\.\/secrets\.js["']/g,
    )) {
      const names = match[1]
        .split(",")
        .map((name) => name.trim().split(/\s+as\s+/)[0])
        .filter(Boolean);
      const missing = names.filter((name) => !exported.has(name));
      if (missing.length > 0)
        throw new Error(`${file} imports ${missing.join(", ")}, which bundle/secrets.js does not export`);
    }
  }
}
