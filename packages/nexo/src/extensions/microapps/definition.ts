/**
 * One configured microapp, as the host runs it: the operator's `extensions.yaml` entry joined with
 * the author's `plugin.toml` beside the executable.
 *
 * Checked here, before anything runs, each problem named with its file, line and key:
 * - the executable exists, is a regular file and may be executed (a script needs its `#!` line);
 * - `plugin.toml`, when present, parses and matches its schema, and its `[plugin].id`, when set,
 *   is the id the operator configured the microapp under.
 *
 * A missing `plugin.toml` is allowed: the microapp then declares no capabilities (every grant it is
 * given is reported as "granted but not declared" and still works).
 *
 * Like a plugin manifest, `plugin.toml` is not passed through `${VAR}` substitution: a microapp's
 * own file must not be able to read the daemon's environment.
 */
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import * as microapp from "@nexo/wire/schemas/microapp";
import { ConfigError, type ConfigIssue } from "../../config/errors.js";
import { locatedError, schemaIssue } from "../../config/locate.js";
import { validateWithSchema } from "../../config/schema-issues.js";
import { parseTomlSource } from "../../config/toml-source.js";
import { CommandNotFoundError, resolveCommand } from "../command.js";

/** The configured `path` is not an executable file; the config loader reports it at that key. */
export class MicroappExecutableError extends Error {
  readonly code = "microapp_executable_invalid" as const;
  readonly microappId: string;
  readonly executable: string;
  constructor(microappId: string, executable: string, detail: string) {
    super(`microapp ${microappId}: the executable ${detail}`);
    this.name = "MicroappExecutableError";
    this.microappId = microappId;
    this.executable = executable;
  }
}

export interface MicroappDefinition {
  /** The `extensions.entries` key. */
  readonly id: string;
  /** The operator's entry (defaults filled in). */
  readonly entry: microapp.MicroappExtensionEntry;
  /** Absolute path of the executable. */
  readonly executable: string;
  /** Its directory: the child's working directory, where `plugin.toml` lives. */
  readonly dir: string;
  /** Absolute path of `plugin.toml`, or undefined when the microapp ships none. */
  readonly manifestFile: string | undefined;
  readonly manifest: microapp.MicroappManifest;
}

/**
 * Reads the microapp configured as `id` with `entry`; a relative `entry.path` starts at
 * `configDir`. Throws MicroappExecutableError when `path` is not an executable file, ConfigError
 * (every problem, at its line in plugin.toml) when the manifest is not valid.
 */
export async function loadMicroappDefinition(
  id: string,
  entry: microapp.MicroappExtensionEntry,
  configDir: string,
): Promise<MicroappDefinition> {
  const executable = resolve(configDir, entry.path);
  try {
    // An absolute path is checked as it is: exists, regular file, executable.
    resolveCommand(executable, { pathEnv: undefined });
  } catch (error) {
    if (!(error instanceof CommandNotFoundError)) throw error;
    throw new MicroappExecutableError(id, executable, error.detail);
  }
  const dir = dirname(executable);
  const manifestFile = join(dir, microapp.MICROAPP_MANIFEST_FILE);
  let text: string | undefined;
  try {
    text = await readFile(manifestFile, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw ConfigError.of(
        { code: "io", file: manifestFile, message: `cannot read: ${(error as Error).message}` },
        { cause: error },
      );
    }
  }
  if (text === undefined) {
    return {
      id,
      entry,
      executable,
      dir,
      manifestFile: undefined,
      manifest: microapp.MicroappManifestSchema.parse({}),
    };
  }
  return {
    id,
    entry,
    executable,
    dir,
    manifestFile,
    manifest: parseMicroappManifest(id, text, manifestFile),
  };
}

/** The in-memory half: `plugin.toml`'s text checked for the microapp configured as `id`. */
export function parseMicroappManifest(id: string, text: string, file: string): microapp.MicroappManifest {
  const source = parseTomlSource(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, file);
  const validated = validateWithSchema(microapp.MicroappManifestSchema, source.data);
  const issues: ConfigIssue[] = validated.ok ? [] : [...validated.issues];
  // Read from the document as written, so a wrong id is reported alongside the schema's problems.
  const declaredId = (source.data as { plugin?: { id?: unknown } } | undefined)?.plugin?.id;
  if (typeof declaredId === "string" && declaredId !== id) {
    issues.push(
      schemaIssue(
        ["plugin", "id"],
        `"${declaredId}" is not the id this microapp is configured under in extensions.yaml ("${id}")`,
      ),
    );
  }
  if (!validated.ok || issues.length > 0) throw locatedError(issues, source.locate, file);
  return validated.value;
}
