/**
 * Keeping an extension's advertised tools registered in the engine's tool registry, the same way
 * for plugins and microapps: register what the running incarnation advertises, replace it all
 * whenever the extension says its catalogue may have changed, and unregister only names that are
 * still this source's (another source may have taken a name meanwhile). A tool the registry
 * refuses (a clash with another source, a schema that does not compile) is left out with a warning.
 */
import type { ToolRegistry } from "../engine/tools/registry.js";
import type { Tool } from "../engine/types.js";
import type { SupervisorLogger } from "./supervisor-types.js";

export interface CatalogToolsSource<Def extends { name: string }> {
  /** Which registry source the tools carry ("plugin", "microapp"). */
  readonly kind: "plugin" | "microapp";
  readonly id: string;
  /** The running incarnation's tools, or undefined while none runs. */
  current(): Iterable<Def> | undefined;
  toTool(def: Def): Tool;
  /** Calls `sync` whenever the catalogue may have changed; returns the unsubscriber. */
  subscribe(sync: () => void): () => void;
}

/** Registers the source's tools now and on each change. Returns the remover. */
export function keepCatalogToolsRegistered<Def extends { name: string }>(
  source: CatalogToolsSource<Def>,
  registry: ToolRegistry,
  logger: SupervisorLogger,
): () => void {
  let registered: string[] = [];
  const unregisterAll = () => {
    for (const name of registered) if (registry.get(name)?.source === source.kind) registry.unregister(name);
    registered = [];
  };
  const sync = () => {
    const tools = source.current();
    if (tools === undefined) return;
    unregisterAll();
    for (const def of tools) {
      try {
        registry.register(source.toTool(def));
        registered.push(def.name);
      } catch (error) {
        logger.warn(
          { [source.kind]: source.id, tool: def.name, err: (error as Error).message },
          `${source.kind} tool not registered`,
        );
      }
    }
  };
  sync();
  const unsubscribe = source.subscribe(sync);
  return () => {
    unsubscribe();
    unregisterAll();
  };
}
