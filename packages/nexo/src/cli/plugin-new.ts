/**
 * The work behind `nexo plugin new NAME`: write the scaffold of scaffold/plugin.ts into a new
 * directory and say how to test and enable it. A TypeScript plugin depends on nexo-plugin-sdk by
 * path: the SDK beside this nexo (a clone's packages/sdk), which `npm install` links.
 *
 * Exit status: 0 written; 1 the directory exists and is not empty, or the SDK cannot be found;
 * 2 a name that makes no plugin id.
 */
import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { type PluginLanguage, pluginFiles, pluginIdOf } from "../scaffold/plugin.js";

export interface PluginNewFlags {
  lang: PluginLanguage;
  dir?: string;
}

function fail(message: string, code: 1 | 2): number {
  process.stderr.write(`nexo plugin new: ${message}\n`);
  return code;
}

/** The directory of nexo-plugin-sdk as this nexo sees it, or undefined. */
function sdkDirectory(): string | undefined {
  let entry: string;
  try {
    // Its exports do not include package.json: resolve the entry and walk up to the package root.
    entry = realpathSync(createRequire(import.meta.url).resolve("nexo-plugin-sdk"));
  } catch {
    return undefined;
  }
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "dist"))) return dir;
  }
  return undefined;
}

export async function runPluginNew(name: string, flags: PluginNewFlags): Promise<number> {
  const id = pluginIdOf(name);
  if (id === undefined) {
    return fail(`"${name}" makes no plugin id: start with a letter; letters, digits, - and _; 32 at most`, 2);
  }
  const target = resolve(flags.dir ?? ".", name);
  if (existsSync(target) && readdirSync(target).length > 0) {
    return fail(`${target} exists and is not empty; nothing was written`, 1);
  }
  let sdk = "";
  if (flags.lang === "ts") {
    const found = sdkDirectory();
    if (found === undefined) {
      return fail(
        "nexo-plugin-sdk is not installed beside this nexo; use --lang python, or see docs/plugins.md",
        1,
      );
    }
    sdk = found;
  }
  for (const [file, text] of Object.entries(pluginFiles(id, flags.lang, sdk))) {
    mkdirSync(dirname(join(target, file)), { recursive: true });
    writeFileSync(join(target, file), text);
  }
  const shown = relative(process.cwd(), target).startsWith("..")
    ? target
    : relative(process.cwd(), target) || ".";
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
