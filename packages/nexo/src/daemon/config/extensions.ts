/**
 * `extensions.yaml`: the microapps the daemon runs (extensions.entries.<id>: path, grants, timeout,
 * config). The file's shape is the wire's (closed, like every config file here); this module reads
 * each entry's microapp too — its executable and its plugin.toml — so `nexo config validate`
 * catches a broken microapp before the daemon starts. A problem with `path` is reported at that key
 * of extensions.yaml, a problem in plugin.toml at its own line there.
 *
 * What the capability grants mean at boot (a microapp missing a required grant is refused, the
 * rest run) is not a config error: the microapp manager decides it when it starts them.
 */
import * as microapp from "@nexo/wire/schemas/microapp";
import { ConfigError, type ConfigIssue } from "../../config/index.js";
import type { Locator } from "../../config/locate.js";
import {
  loadMicroappDefinition,
  type MicroappDefinition,
  MicroappExecutableError,
} from "../../extensions/microapps/definition.js";
import { issueAt } from "./sources.js";

export const ExtensionsFileSchema = microapp.ExtensionsFileSchema;

export interface MicroappsInspection {
  /** The microapps whose executable and manifest are usable, in file order. */
  readonly definitions: MicroappDefinition[];
  readonly issues: ConfigIssue[];
}

/** Reads every configured microapp; never throws for a microapp's sake. */
export async function inspectMicroapps(
  file: microapp.ExtensionsFile,
  path: string,
  locate: Locator,
  configDir: string,
): Promise<MicroappsInspection> {
  const issues: ConfigIssue[] = [];
  const loaded = await Promise.all(
    Object.entries(file.extensions.entries).map(async ([id, entry]) => {
      try {
        return await loadMicroappDefinition(id, entry, configDir);
      } catch (error) {
        if (error instanceof MicroappExecutableError)
          issues.push(issueAt(path, locate, ["extensions", "entries", id, "path"], error.message));
        else if (error instanceof ConfigError) issues.push(...error.issues);
        else throw error;
        return undefined;
      }
    }),
  );
  return { definitions: loaded.filter((definition) => definition !== undefined), issues };
}
