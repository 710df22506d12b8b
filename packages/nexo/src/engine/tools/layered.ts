/**
 * Several tool registries seen as one: an agent's own tools (built-ins, Spawn) first, then tools
 * shared by every agent of the daemon (plugins, MCP servers). Names are unique across layers in
 * practice — plugin and MCP tools are namespaced — and the first layer wins otherwise.
 */
import type { ToolHost } from "../session-types.js";
import type { Tool, ToolContext, ToolOutput, ToolSpec } from "../types.js";

export class LayeredTools implements ToolHost {
  constructor(private readonly layers: readonly ToolHost[]) {}

  get(name: string): Tool | undefined {
    for (const layer of this.layers) {
      const tool = layer.get(name);
      if (tool) return tool;
    }
    return undefined;
  }

  specs(filter?: (tool: Tool) => boolean): readonly ToolSpec[] {
    const seen = new Set<string>();
    const out: ToolSpec[] = [];
    for (const layer of this.layers) {
      for (const spec of layer.specs(filter)) {
        if (seen.has(spec.name)) continue;
        seen.add(spec.name);
        out.push(spec);
      }
    }
    return out;
  }

  invoke(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
    for (const layer of this.layers) {
      if (layer.get(name)) return layer.invoke(name, args, ctx);
    }
    return Promise.resolve({ output: `Unknown tool "${name}".`, isError: true });
  }
}
