/**
 * `mcp/list|get|upsert|remove|test` (`mcpManagement`) over the servers of mcp.yaml, and
 * `mcp/status/list` plus the `mcp/status/updated` broadcast (`mcpStatus`) with their live state
 * where the daemon runs them.
 *
 * The wire names fields the protocol's way (camelCase, `streamableHttp`, seconds); mcp.yaml keeps
 * nexo's (snake_case, `streamable_http`, milliseconds). `mcp/upsert` replaces the whole entry: a
 * field the client leaves out is removed from the file; every other line of mcp.yaml, comments
 * included, stays as it was. The edit is validated with the whole config directory before it is
 * written, and the daemon reconnects the server before the reply.
 *
 * `mcp/test` connects the entry the client sent under a throwaway client, counts its tools and
 * disconnects: nothing is written and nothing running is touched. It works wherever the config
 * directory is (the standalone server too), so it is served with the configuration methods; a
 * server that cannot be reached is `success: false`, as the protocol wants, not an RPC error.
 */
import {
  AppServerErrorCode as Code,
  type McpServerConfig,
  type McpServerStatus,
  mcpMethods,
  mcpStatusMethods,
} from "@nexo/wire/schemas/appserver";
import type {
  DaemonServices,
  McpServerEntry,
  McpServerRecord,
  Patch,
} from "../../../daemon/services/index.js";
import { withoutRemovals } from "../../../daemon/services/index.js";
import { serverNameProblem } from "../../../extensions/mcp/config.js";
import type { McpServerStatus as LiveStatus } from "../../../extensions/mcp/manager.js";
import { type Call, defineFamily } from "../family.js";
import type { AppServerHost } from "../host.js";
import { familyError, viaServices } from "../management.js";
import { announceConfigChange, managesConfig, managesLive, servicesOf } from "./managed.js";

const CODES = {
  not_found: Code.mcpServerNotFound,
  invalid_config: Code.mcpServerValidationFailed,
  conflict: Code.mcpServerNameConflict,
};

const STDIO_ONLY = ["command", "args", "env", "cwd"] as const;
const HTTP_ONLY = ["url", "httpHeaders"] as const;

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const millis = (s: number | null | undefined) => (s == null ? null : Math.round(s * 1000));

/** An mcp.yaml entry as the protocol shows it. */
export function toWire(record: McpServerRecord): McpServerConfig {
  const entry = record.entry as Record<string, unknown> & McpServerEntry;
  const common = {
    name: record.name,
    enabled: entry.enabled !== false,
    origin: { kind: "workspace" as const },
    readOnly: false,
    ...(entry.startup_timeout_ms === undefined
      ? {}
      : { startupTimeoutSec: seconds(entry.startup_timeout_ms) }),
    ...(entry.call_timeout_ms === undefined ? {} : { toolTimeoutSec: seconds(entry.call_timeout_ms) }),
  };
  if (entry.transport === "stdio") {
    return {
      ...common,
      transport: "stdio",
      command: entry.command,
      args: (entry.args ?? []).map(String),
      env: Object.fromEntries(Object.entries(entry.env ?? {}).map(([k, v]) => [k, String(v)])),
      ...(entry.cwd === undefined ? {} : { cwd: entry.cwd }),
    };
  }
  return { ...common, transport: "streamableHttp", url: entry.url, httpHeaders: entry.headers ?? {} };
}

/** The whole entry the client sent, as a patch that also removes every key it left out. */
function toPatch(server: McpServerConfig): Patch<McpServerEntry> {
  const misplaced = (server.transport === "stdio" ? HTTP_ONLY : STDIO_ONLY).filter(
    (key) => server[key] !== undefined && server[key] !== null,
  );
  if (misplaced.length > 0) {
    throw familyError(
      Code.mcpServerValidationFailed,
      "MCP server validation failed",
      `a ${server.transport} server does not take ${misplaced.join(", ")}`,
    );
  }
  const needed = server.transport === "stdio" ? "command" : "url";
  if (!server[needed]) {
    throw familyError(
      Code.mcpServerValidationFailed,
      "MCP server validation failed",
      `a ${server.transport} server needs ${needed}`,
    );
  }
  const common = {
    enabled: server.enabled ?? true,
    startup_timeout_ms: millis(server.startupTimeoutSec),
    call_timeout_ms: millis(server.toolTimeoutSec),
  };
  if (server.transport === "stdio") {
    return {
      ...common,
      transport: "stdio",
      command: server.command ?? null,
      args: server.args ?? null,
      env: server.env ?? null,
      cwd: server.cwd ?? null,
    } as Patch<McpServerEntry>;
  }
  return {
    ...common,
    transport: "streamable_http",
    url: server.url ?? null,
    headers: server.httpHeaders ?? null,
  } as Patch<McpServerEntry>;
}

async function upsert(server: McpServerConfig, call: Call): Promise<{ server: McpServerConfig }> {
  const problem = serverNameProblem(server.name);
  if (problem !== undefined) {
    throw familyError(
      Code.mcpServerValidationFailed,
      "MCP server validation failed",
      `name "${server.name}" ${problem}`,
    );
  }
  const services = servicesOf(call);
  const patch = toPatch(server);
  const clash = (await viaServices(CODES, () => services.mcp.list())).find(
    (other) => other.name !== server.name && other.name.toLowerCase() === server.name.toLowerCase(),
  );
  if (clash !== undefined) {
    throw familyError(
      Code.mcpServerNameConflict,
      "MCP server name conflict",
      `"${server.name}" differs from the existing server "${clash.name}" only in case`,
    );
  }
  const result = await viaServices(CODES, () => services.mcp.upsert(server.name, patch));
  announceConfigChange(call.host, "mcp/upsert", ["mcp"]);
  // Where the servers run, the state after the change (a disabled server's too: the manager
  // reports nothing for a server it merely closed).
  if (managesLive(call.host)) {
    call.host.broadcast("mcp/status/updated", { server: toStatus(result.server) });
  }
  return { server: toWire(result.server) };
}

async function probe(server: McpServerConfig, services: DaemonServices) {
  const entry = toPatch(server);
  const result = await viaServices(CODES, () =>
    services.mcp.test(server.name, withoutRemovals(entry) as McpServerEntry),
  );
  if (result.ok) return { success: true, toolCount: result.tools.length };
  // A configuration the file would refuse is a validation error; a server that does not answer is a result.
  if (result.failure === "invalid_config") {
    throw familyError(Code.mcpServerValidationFailed, "MCP server validation failed", result.reason);
  }
  return { success: false, errorCode: "McpServerTestFailed", errorMessage: result.reason };
}

function startupState(enabled: boolean, live: LiveStatus | undefined): McpServerStatus["startupState"] {
  if (!enabled) return "disabled";
  if (live?.state === "connected") return "ready";
  if (live?.state === "failed") return "error";
  return "starting";
}

/** The live state in the protocol's words; a server not started yet (or disabled) has none. */
export function toStatus(record: McpServerRecord): McpServerStatus {
  const wire = toWire(record);
  const enabled = wire.enabled ?? true;
  return {
    name: record.name,
    enabled,
    startupState: startupState(enabled, record.status),
    toolCount: record.status?.tools.length ?? 0,
    lastError: record.status?.error ?? null,
    transport: wire.transport,
  };
}

/** A running server's state change, as `mcp/status/updated` shows it (a running server is enabled). */
function liveToStatus(live: LiveStatus): McpServerStatus {
  return {
    name: live.name,
    enabled: true,
    startupState: startupState(true, live),
    toolCount: live.tools.length,
    lastError: live.error ?? null,
    transport: live.transport === "stdio" ? "stdio" : "streamableHttp",
  };
}

/**
 * Broadcasts `mcp/status/updated` on every state change of a server the daemon runs (connecting,
 * ready, restarting, failed), until the returned function is called. Only where the servers run.
 */
export function announceMcpStatus(host: AppServerHost): () => void {
  if (!managesLive(host) || host.management === undefined) return () => {};
  return host.management.services.mcp.watch((live) =>
    host.broadcast("mcp/status/updated", { server: liveToStatus(live) }),
  );
}

export const mcpFamily = defineFamily({
  name: "mcp",
  methods: mcpMethods,
  available: managesConfig,
  capabilities: () => ({ mcpManagement: true }),
  handlers: {
    "mcp/list": async (_params, call) => {
      const servers = await viaServices(CODES, () => servicesOf(call).mcp.list());
      return { servers: servers.map(toWire) };
    },
    "mcp/get": async ({ name }, call) => ({
      server: toWire(await viaServices(CODES, () => servicesOf(call).mcp.get(name))),
    }),
    "mcp/upsert": ({ server }, call) => upsert(server, call),
    "mcp/test": ({ server }, call) => probe(server, servicesOf(call)),
    "mcp/remove": async ({ name }, call) => {
      const services = servicesOf(call);
      await viaServices(CODES, () => services.mcp.get(name));
      const { removed } = await viaServices(CODES, () => services.mcp.delete(name));
      announceConfigChange(call.host, "mcp/remove", ["mcp"]);
      return { removed };
    },
  },
});

export const mcpStatusFamily = defineFamily({
  name: "mcp-status",
  methods: mcpStatusMethods,
  available: managesLive,
  capabilities: () => ({ mcpStatus: true }),
  handlers: {
    "mcp/status/list": async (_params, call) => {
      const servers = await viaServices(CODES, () => servicesOf(call).mcp.list());
      return { servers: servers.map(toStatus) };
    },
  },
});
