/**
 * `nexo doctor --config DIR`: every YAML/TOML file in the directory must parse and every `${...}`
 * must resolve. Each problem is reported with its file, line, column and key path.
 */
import { stat } from "node:fs/promises";
import { z } from "zod";
import { ConfigError, listConfigFiles, loadConfigFile } from "../config/index.js";
import type { Check } from "./checks.js";

const MAX_LISTED_ISSUES = 10;

export function configDirCheck(dir: string, env: NodeJS.ProcessEnv = process.env): Check {
  return {
    id: "config",
    title: `config directory ${dir}`,
    required: true,
    async run() {
      const info = await stat(dir).catch(() => undefined);
      if (!info?.isDirectory()) return { status: "fail", detail: `${dir} is not a directory` };
      const files = await listConfigFiles(dir);
      if (files.length === 0) return { status: "warn", detail: "no .yaml, .yml or .toml files in it" };
      const problems: string[] = [];
      for (const file of files) {
        try {
          await loadConfigFile(file, z.unknown(), { env });
        } catch (error) {
          if (error instanceof ConfigError) problems.push(...error.message.split("\n"));
          else problems.push(`${file}: ${(error as Error).message}`);
        }
      }
      if (problems.length === 0) return { status: "ok", detail: `${files.length} file(s) valid` };
      const shown = problems.slice(0, MAX_LISTED_ISSUES);
      const more = problems.length > shown.length ? `\n… and ${problems.length - shown.length} more` : "";
      return { status: "fail", detail: `${shown.join("\n")}${more}` };
    },
  };
}
