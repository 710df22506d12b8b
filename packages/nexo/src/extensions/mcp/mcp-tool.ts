/**
 * An MCP server's tool as an engine `Tool`.
 *
 * The tool does not hold the connection: it asks its caller at each call, so a tool object the
 * registry kept still answers correctly after its server died ("MCP server X is not connected") or
 * was connected again. Expected failures (server gone, timeout, cancelled, refused) come back as
 * error outputs the model can read; only programming errors are thrown.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorOutput } from "../../engine/tools/tool-output.js";
import type { Tool, ToolContext, ToolOutput } from "../../engine/types.js";
import { toolOutputFromResult } from "./content.js";
import { McpError } from "./errors.js";
import type { McpToolEntry } from "./tool-list.js";

/** Routes a call to the server that owns the tool (the manager implements it). */
export interface McpToolCaller {
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
}

const PREVIEW_CHARS = 80;

export function createMcpTool(server: string, entry: McpToolEntry, caller: McpToolCaller): Tool {
  return {
    name: entry.name,
    description: entry.description,
    inputSchema: entry.inputSchema,
    category: "mcp",
    source: "mcp",
    origin: server,
    describe(args: Record<string, unknown>): string {
      const preview = JSON.stringify(args) ?? "{}";
      const shown = preview.length > PREVIEW_CHARS ? `${preview.slice(0, PREVIEW_CHARS - 1)}…` : preview;
      return `MCP ${server}/${entry.tool}: ${shown}`;
    },
    async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
      try {
        const result = await caller.callTool(server, entry.tool, args, ctx.signal);
        return toolOutputFromResult(result, { server, tool: entry.tool });
      } catch (error) {
        if (error instanceof McpError)
          return errorOutput(error.message, { mcp_server: server, mcp_tool: entry.tool });
        throw error;
      }
    },
  };
}
