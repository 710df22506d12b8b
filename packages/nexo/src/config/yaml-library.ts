/**
 * The yaml package, loaded for the work that needs it and not kept after. An idle daemon has
 * parsed its config files at start and parses YAML again only on a reload, an admin edit or a
 * SKILL.md read; an ES module, once imported, stays loaded for the process's life, and yaml's
 * source text and compiled code were ~1 MB of the idle daemon's heap (docs/performance.md,
 * "Seventh pass (a): the live heap"). Loaded through CommonJS instead, and taken out of
 * require's cache at once, the package lives only as long as something uses it: this module
 * holds it through a WeakRef, so every caller in the same synchronous job (and any later one
 * before a collection) shares one copy, and a collection after the work frees it. The next caller
 * loads it again: the bundle's one-file copy took 8-13 ms of CPU to load, and its parser ~5 ms
 * more to compile on the first parse (measured at load 17), paid by a reload, an admin edit or a
 * skill read that comes after a collection, never by a message.
 *
 * Two loads may therefore meet in one object graph (a Document parsed before a collection, edited
 * after it). yaml tells its node kinds apart by registered symbols (`isMap`, `isSeq`, ... read
 * `Symbol.for("yaml.node.type")`), not by class identity, so that works; callers must not use
 * `instanceof` against yaml's classes.
 *
 * In the bundle (scripts/bundle-cli.mjs), `YAML_REQUEST` names bundle/yaml.cjs, the package in
 * one CommonJS file built beside the chunks; unbundled, it is the package itself.
 */
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

export type YamlLibrary = typeof Yaml;

/** What require() loads: the bundle script rewrites this line (see the header). */
const YAML_REQUEST = "yaml";

let held: WeakRef<YamlLibrary> | undefined;

/** The yaml package's exports: the copy in use, or a fresh load. */
export function yamlLibrary(): YamlLibrary {
  const alive = held?.deref();
  if (alive !== undefined) return alive;
  const loaded = loadUncached();
  held = new WeakRef(loaded);
  return loaded;
}

/**
 * require() of the package, then every module it loaded out of require's cache, so that nothing
 * but the returned exports (and what the caller builds with them) keeps it. The require function
 * is made here and dropped: its parent record lists the loaded module as a child.
 */
function loadUncached(): YamlLibrary {
  const require = createRequire(import.meta.url);
  const before = new Set(Object.keys(require.cache));
  const loaded = require(YAML_REQUEST) as YamlLibrary;
  for (const key of Object.keys(require.cache)) if (!before.has(key)) delete require.cache[key];
  return loaded;
}
