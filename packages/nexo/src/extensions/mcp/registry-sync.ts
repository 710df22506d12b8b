/**
 * Keeps a ToolRegistry in step with an McpManager: when a server's tool list changes (connect,
 * `tools/list_changed`, close), its old tools leave the registry and the new ones join.
 */
import type { ToolRegistry } from "../../engine/tools/registry.js";
import type { McpManager } from "./manager.js";

export function syncMcpTools(manager: McpManager, registry: ToolRegistry): () => void {
  const owned = new Map<string, string[]>();
  const sync = (server: string) => {
    for (const name of owned.get(server) ?? []) registry.unregister(name);
    const tools = manager.tools(server);
    for (const tool of tools) registry.register(tool);
    owned.set(
      server,
      tools.map((t) => t.name),
    );
  };
  for (const status of manager.statuses()) sync(status.name);
  manager.on("toolsChanged", sync);
  return () => manager.off("toolsChanged", sync);
}
