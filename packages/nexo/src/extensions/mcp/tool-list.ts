/**
 * A server's tool list: every page of `tools/list`, and the tools as the engine names them
 * (`mcp__<server>__<tool>`, naming.ts).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { namespaceTools } from "./naming.js";

/** One tool as the engine will name it, with what the server said about it. */
export interface McpToolEntry {
  /** `mcp__<server>__<tool>`. */
  readonly name: string;
  /** The name the server knows it by. */
  readonly tool: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

/** Guards against a server whose `nextCursor` never ends. */
const MAX_TOOL_PAGES = 100;

export async function listAllTools(
  client: Client,
  signal: AbortSignal | undefined,
  timeout: number,
): Promise<SdkTool[]> {
  const tools: SdkTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
      timeout,
      ...(signal === undefined ? {} : { signal }),
    });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error(`the server kept paginating its tool list past ${MAX_TOOL_PAGES} pages`);
}

/** The engine's entries for `tools`; a tool no unique name can be made for is left out (and logged). */
export function toolEntries(
  server: string,
  tools: readonly SdkTool[],
  logger: { warn(obj: object, msg?: string): void },
): Map<string, McpToolEntry> {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const { names, skipped } = namespaceTools(server, [...byName.keys()]);
  if (skipped.length > 0) {
    logger.warn(
      { mcp_server: server, tools: skipped },
      "MCP tools left out: no unique name could be made for them",
    );
  }
  const entries = new Map<string, McpToolEntry>();
  for (const [name, original] of names) {
    const tool = byName.get(original);
    if (tool === undefined) continue;
    entries.set(name, {
      name,
      tool: original,
      description: tool.description ?? tool.title ?? `Tool ${original} of MCP server ${server}`,
      inputSchema: { ...tool.inputSchema },
    });
  }
  return entries;
}
