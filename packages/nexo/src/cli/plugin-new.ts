/**
 * The work behind `nexo plugin new NAME`: write the scaffold of scaffold/plugin.ts into a new
 * directory and say how to test and enable it. A TypeScript plugin depends on nexo-plugin-sdk as
 * scaffold/sdk-source.ts finds it (--sdk, the tarball shipped with this nexo, or a clone's SDK).
 *
 * Exit status: 0 written; 1 the directory exists and is not empty, or no SDK can be used;
 * 2 a name that makes no plugin id, or --sdk without --lang ts.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { PluginLanguage } from "../scaffold/choices.js";
import { pluginFiles, pluginIdOf } from "../scaffold/plugin.js";
import { findSdk, provideSdk } from "../scaffold/sdk-source.js";
import { occupied, shownPath, writeScaffold } from "../scaffold/write.js";

export interface PluginNewFlags {
  lang: PluginLanguage;
  dir?: string;
  sdk?: string;
}

function fail(message: string, code: 1 | 2): number {
  process.stderr.write(`nexo plugin new: ${message}\n`);
  return code;
}

export async function runPluginNew(name: string, flags: PluginNewFlags): Promise<number> {
  const id = pluginIdOf(name);
  if (id === undefined) {
    return fail(`"${name}" makes no plugin id: start with a letter; letters, digits, - and _; 32 at most`, 2);
  }
  const target = resolve(flags.dir ?? ".", name);
  const taken = occupied(target);
  if (taken !== undefined) return fail(taken, 1);
  if (flags.sdk !== undefined && flags.lang !== "ts") return fail("--sdk is for --lang ts", 2);
  const sdk = flags.lang === "ts" ? findSdk(flags.sdk) : undefined;
  if (sdk !== undefined && "error" in sdk) return fail(sdk.error, 1);
  mkdirSync(target, { recursive: true });
  const sdkSpec = sdk === undefined ? "" : provideSdk(sdk, target);
  writeScaffold(target, pluginFiles(id, flags.lang, sdkSpec));
  const shown = shownPath(target);
  const test = flags.lang === "python" ? "python3 -m unittest" : "npm install && npm test";
  process.stdout.write(
    [
      `wrote ${shown}: a ${flags.lang === "python" ? "Python" : "TypeScript"} plugin "${id}" with the tool ${id}_greet`,
      "next:",
      `  cd ${shown} && ${test}`,
      `  nexo plugin check ${shown}`,
      `  add "- dir: ${target}" to your config directory's plugins.yaml`,
      "",
    ].join("\n"),
  );
  return 0;
}
