/**
 * The server's own settings in the config directory's appserver.yaml, read and edited through the
 * services' config writer (the admin RPC's): a read returns the file as written (placeholders not
 * expanded); an edit changes only the keys it names, keeps every other line and comment, is
 * validated with the whole directory before anything is written, and is then applied by the
 * services' reload.
 */
import { type AppServerFile, AppServerFileSchema } from "../../daemon/config/appserver.js";
import type { ConfigEditResult, DaemonServices } from "../../daemon/services/index.js";
import { ensureBlockMapping, patchMapping } from "../../daemon/services/yaml-patch.js";

/** appserver.yaml as written; `{}` when there is none. Throws InvalidConfigError when it is invalid. */
export async function readAppServerFile(services: DaemonServices): Promise<AppServerFile> {
  return ((await services.config.read("appserver", AppServerFileSchema)) ?? {}) as AppServerFile;
}

/**
 * Sets (or, for `null`, removes) each key of `patch` in the mapping at `path` of appserver.yaml,
 * creating the mapping when needed; a mapping left empty by removals is removed too.
 */
export function patchAppServerFile(
  services: DaemonServices,
  path: readonly string[],
  patch: Record<string, unknown>,
): Promise<ConfigEditResult> {
  return services.config.edit("appserver", (doc) => {
    const adds = Object.values(patch).some((value) => value !== null && value !== undefined);
    if (path.length > 0 && !doc.hasIn(path)) {
      if (!adds) return;
      ensureBlockMapping(doc, path as string[]);
    }
    patchMapping(doc, path, patch);
    for (let depth = path.length; depth > 0; depth--) {
      const node = doc.getIn(path.slice(0, depth)) as { items?: unknown[] } | undefined;
      if (node?.items?.length === 0) doc.deleteIn(path.slice(0, depth));
    }
  });
}
