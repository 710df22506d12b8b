/**
 * `nexo/admin/mcp/*` (mcp_crud): the MCP servers of mcp.yaml through the daemon's services facade.
 * An upsert is the server's whole definition (the keys of the other transport and the ones it
 * leaves out are removed; `enabled` and the timeouts written by hand are kept), written as one
 * comment-preserving edit and applied by a hot reload that reconnects exactly that server and
 * waits for it, so the answer carries its new live state (`state`, `tools`, `error`: loose fields).
 *
 * nexo speaks stdio and streamable HTTP: `sse` and `auto` are -32602, and so are `log_level` and
 * `context_passthrough`, which nexo's MCP client does not have (rather than dropping them silently).
 */
import { InvalidParamsError } from "@nexo/wire";
import type { admin } from "@nexo/wire/schemas";
import type { McpServerEntry, McpServerRecord, Patch } from "../../daemon/services/index.js";
import { defineAdminDomain } from "../domain.js";
import { viaService } from "../service-errors.js";

export const mcpDomain = defineAdminDomain({
  domain: "mcp",
  handlers: ({ daemon }) =>
    daemon && {
      "nexo/admin/mcp/list": () =>
        viaService(async () => ({
          servers: (await daemon.mcp.list()).map((server) => ({
            name: server.name,
            transport: wireTransport(server.entry),
            ...liveState(server),
          })),
        })),

      "nexo/admin/mcp/get": ({ name }) =>
        viaService(async () => {
          const server = (await daemon.mcp.list()).find((candidate) => candidate.name === name);
          return { server: server === undefined ? null : serverDetail(server) };
        }),

      "nexo/admin/mcp/upsert": (params) =>
        viaService(async () => {
          const { server, created } = await daemon.mcp.upsert(params.name, entryPatch(params));
          return { server: serverDetail(server), created };
        }),

      "nexo/admin/mcp/delete": ({ name }) =>
        viaService(async () => ({ removed: (await daemon.mcp.delete(name)).removed })),
    },
});

/** The whole definition as a patch of the entry: what the call leaves out is removed. */
function entryPatch(server: admin.McpServerDetail): Patch<McpServerEntry> {
  for (const key of ["log_level", "context_passthrough"] as const) {
    if (server[key] !== undefined)
      throw new InvalidParamsError(`invalid params: ${key}: nexo's MCP servers have no ${key} setting`);
  }
  if (server.transport === "stdio")
    return {
      transport: "stdio",
      command: server.command ?? "",
      args: server.args ?? null,
      env: server.env ?? null,
      cwd: server.cwd ?? null,
    } as Patch<McpServerEntry>;
  if (server.transport !== "streamable_http")
    throw new InvalidParamsError(
      `invalid params: transport: nexo connects to MCP servers over "stdio" or "streamable_http", not "${server.transport}"`,
    );
  return {
    transport: "streamable_http",
    url: server.url ?? "",
    headers: server.headers ?? null,
  } as Patch<McpServerEntry>;
}

function wireTransport(entry: McpServerEntry): admin.McpServerDetail["transport"] {
  return entry.transport === "stdio" ? "stdio" : "streamable_http";
}

function serverDetail(server: McpServerRecord): admin.McpServerDetail {
  const { entry } = server;
  const fields =
    entry.transport === "stdio"
      ? {
          command: entry.command,
          args: (entry.args ?? []).map(String),
          env: Object.fromEntries(
            Object.entries(entry.env ?? {}).map(([key, value]) => [key, String(value)]),
          ),
          ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
        }
      : { url: entry.url, headers: entry.headers ?? {} };
  return { name: server.name, transport: wireTransport(entry), ...fields, ...liveState(server) };
}

/** The server's live state, as loose fields; nothing while it is not started (disabled). */
function liveState({ entry, status }: McpServerRecord) {
  return {
    enabled: entry.enabled !== false,
    ...(status === undefined ? {} : { state: status.state, tools: status.tools }),
    ...(status?.error === undefined ? {} : { error: status.error }),
  };
}
