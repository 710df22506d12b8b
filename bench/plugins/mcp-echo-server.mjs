/**
 * The MCP side of the plugin benchmark: the same echo tool, served by @modelcontextprotocol/sdk's
 * McpServer over stdio, as an MCP user would ship it (plain JavaScript, no TypeScript loader).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "nexo-bench-echo", version: "1.0.0" });
server.registerTool(
  "echo",
  { description: "Echoes its text", inputSchema: { text: z.string(), n: z.number().optional() } },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);
await server.connect(new StdioServerTransport());
