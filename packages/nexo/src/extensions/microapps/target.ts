/**
 * Which microapp `nexo microapp check|call PATH` means: PATH is the executable, or its directory
 * holding exactly one executable `main` / `main.<ext>`. The id is `--id`, else plugin.toml's
 * `[plugin].id`, else the directory's name (it must be a valid extension id).
 */
import { accessSync, constants, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import * as microapp from "@nexo/wire/schemas/microapp";
import { parseTomlSource } from "../../config/toml-source.js";

export interface MicroappTarget {
  id: string;
  /** Absolute path of the executable. */
  executable: string;
}

export class MicroappTargetError extends Error {
  readonly code = "microapp_target_invalid" as const;
  constructor(message: string) {
    super(message);
    this.name = "MicroappTargetError";
  }
}

const MAIN = /^main(?:\.[A-Za-z0-9]+)?$/;

export function resolveMicroappTarget(target: string, id?: string): MicroappTarget {
  const absolute = resolve(target);
  let isDir: boolean;
  try {
    isDir = statSync(absolute).isDirectory();
  } catch {
    throw new MicroappTargetError(`${target}: no such file or directory`);
  }
  const executable = isDir ? findMain(absolute) : absolute;
  const chosen = id ?? declaredId(dirname(executable)) ?? basename(dirname(executable));
  if (!microapp.EXTENSION_ID_PATTERN.test(chosen)) {
    throw new MicroappTargetError(
      `"${chosen}" is not an extension id (1-32 chars of a-z, 0-9, '_' and '-', starting with a letter); give one with --id`,
    );
  }
  return { id: chosen, executable };
}

function findMain(dir: string): string {
  const candidates = readdirSync(dir)
    .filter((name) => MAIN.test(name))
    .map((name) => join(dir, name))
    .filter((path) => {
      try {
        accessSync(path, constants.X_OK);
        return statSync(path).isFile();
      } catch {
        return false;
      }
    });
  if (candidates.length === 1) return candidates[0]!;
  const found =
    candidates.length === 0
      ? "no executable main or main.<ext>"
      : `several (${candidates.map((c) => basename(c)).join(", ")})`;
  throw new MicroappTargetError(`${dir} holds ${found}: give the executable's path instead`);
}

/** plugin.toml's `[plugin].id`, when the file is there and says one (its other problems come later). */
function declaredId(dir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, microapp.MICROAPP_MANIFEST_FILE), "utf8");
  } catch {
    return undefined;
  }
  try {
    const id = (
      parseTomlSource(text, join(dir, microapp.MICROAPP_MANIFEST_FILE)).data as { plugin?: { id?: unknown } }
    )?.plugin?.id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
