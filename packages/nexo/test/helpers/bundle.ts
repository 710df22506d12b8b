/**
 * Reads the bundled CLI (packages/nexo/bundle/) the way Node loads it: what a chunk brings with it
 * before any of its code runs is the closure of its static imports. Start-up tests use it to pin
 * what a fast start loads.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BUNDLE = fileURLToPath(new URL("../../bundle/", import.meta.url));

/** The sources of `chunk` and of every chunk it imports statically. */
export function staticClosure(chunk: string, seen = new Set<string>()): string[] {
  if (seen.has(chunk)) return [];
  seen.add(chunk);
  const source = readFileSync(join(BUNDLE, chunk), "utf8");
  const imported = [...source.matchAll(/^(?:import|export)\b[^;]*?["']\.\/([^"']+\.js)["']/gms)].map(
    (m) => m[1]!,
  );
  return [source, ...imported.flatMap((next) => staticClosure(next, seen))];
}

/**
 * Everything loaded before the fast start named `name` (its chunk's file name begins with it) runs:
 * main.js and that chunk, each with its static imports.
 */
export function fastStartSources(name: string): string {
  const main = staticClosure("main.js").join("\n");
  const chunk = new RegExp(`import\\(["']\\./(${name}-[^"']+\\.js)["']\\)`).exec(main)?.[1];
  if (chunk === undefined) throw new Error(`main.js does not import ${name} on demand`);
  return [main, ...staticClosure(chunk)].join("\n");
}

/** What no fast start may load: the schemas, the logger, commander, the program, the doors. */
export const NOT_IN_A_FAST_START = [
  "node_modules/zod/",
  "node_modules/pino",
  "node_modules/commander/",
  "node_modules/better-sqlite3",
  "wire/dist/",
  "nexo/dist/log.js",
  "cli/program.js",
  "nexo/dist/engine/",
  "nexo/dist/store/",
  "doors/appserver/families/",
  "doors/appserver/host.js",
  "doors/jsonstream/door.js",
  "doors/jsonstream/bootstrap.js",
];
