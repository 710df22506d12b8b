/**
 * The work behind `nexo microapp new NAME`: write the scaffold of scaffold/microapp.ts into a new
 * directory, then print how to test it and the extensions.yaml entry that enables it. A TypeScript
 * microapp depends on nexo-plugin-sdk as scaffold/sdk-source.ts finds it.
 *
 * Exit status: 0 written; 1 the directory exists and is not empty, or no SDK can be used;
 * 2 a name that makes no extension id, or --sdk without --lang ts.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MicroappLanguage } from "../scaffold/choices.js";
import {
  EXECUTABLE_FILES,
  executableOf,
  extensionsSnippet,
  microappFiles,
  microappIdOf,
  toolPrefixOf,
} from "../scaffold/microapp.js";
import { findSdk, provideSdk } from "../scaffold/sdk-source.js";
import { occupied, shownPath, writeScaffold } from "../scaffold/write.js";

export interface MicroappNewFlags {
  lang: MicroappLanguage;
  dir?: string;
  sdk?: string;
}

function fail(message: string, code: 1 | 2): number {
  process.stderr.write(`nexo microapp new: ${message}\n`);
  return code;
}

export async function runMicroappNew(name: string, flags: MicroappNewFlags): Promise<number> {
  const id = microappIdOf(name);
  if (id === undefined) {
    return fail(
      `"${name}" makes no extension id: start with a letter; letters, digits, - and _; 32 at most`,
      2,
    );
  }
  if (flags.sdk !== undefined && flags.lang !== "ts") return fail("--sdk is for --lang ts", 2);
  const target = resolve(flags.dir ?? ".", name);
  const taken = occupied(target);
  if (taken !== undefined) return fail(taken, 1);
  const sdk = flags.lang === "ts" ? findSdk(flags.sdk) : undefined;
  if (sdk !== undefined && "error" in sdk) return fail(sdk.error, 1);
  mkdirSync(target, { recursive: true });
  const sdkSpec = sdk === undefined ? "" : provideSdk(sdk, target);
  writeScaffold(target, microappFiles(id, flags.lang, sdkSpec), EXECUTABLE_FILES);
  const shown = shownPath(target);
  const test = flags.lang === "python" ? "python3 -m unittest" : "npm install && npm test";
  const snippet = extensionsSnippet(id, join(target, executableOf(flags.lang)));
  process.stdout.write(
    [
      `wrote ${shown}: a ${flags.lang === "python" ? "Python" : "TypeScript"} microapp "${id}" with the tool ${toolPrefixOf(id)}_agents`,
      "next:",
      `  cd ${shown} && ${test}`,
      `  nexo microapp check ${shown}`,
      "then enable it in your config directory's extensions.yaml (merge under extensions.entries):",
      "",
      snippet,
    ].join("\n"),
  );
  return 0;
}
