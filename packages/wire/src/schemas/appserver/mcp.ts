/**
 * MCP server management (`mcpManagement`, `mcpStatus`): the servers of the workspace's MCP config
 * as the protocol names their fields (camelCase, `streamableHttp`), and their live state.
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema } from "./common.js";

export const McpTransportSchema = lazySchema("appserver.mcp", () => z.enum(["stdio", "streamableHttp"]));
export type McpTransport = z.infer<typeof McpTransportSchema>;

export const McpServerConfigSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({
    /** The key; compared case-insensitively for conflicts. */
    name: z.string().min(1),
    enabled: z.boolean().optional(),
    transport: McpTransportSchema,
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().nullable().optional(),
    url: z.string().optional(),
    httpHeaders: z.record(z.string(), z.string()).optional(),
    startupTimeoutSec: z.number().positive().nullable().optional(),
    toolTimeoutSec: z.number().positive().nullable().optional(),
    origin: z.looseObject({ kind: z.enum(["workspace", "plugin"]) }).optional(),
    /** Entries the client must not send back to `mcp/upsert`. */
    readOnly: z.boolean().optional(),
  }),
);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

export const McpStartupStateSchema = lazySchema("appserver.mcp", () =>
  z.enum(["disabled", "starting", "ready", "error"]),
);
export type McpStartupState = z.infer<typeof McpStartupStateSchema>;

export const McpServerStatusSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({
    name: z.string().min(1),
    enabled: z.boolean(),
    startupState: McpStartupStateSchema,
    toolCount: z.number().int().nonnegative(),
    lastError: z.string().nullable().optional(),
    transport: McpTransportSchema,
  }),
);
export type McpServerStatus = z.infer<typeof McpServerStatusSchema>;

export const McpNameParamsSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ name: z.string().min(1) }),
);
export type McpNameParams = z.infer<typeof McpNameParamsSchema>;

export const McpListResultSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ servers: z.array(McpServerConfigSchema) }),
);
export type McpListResult = z.infer<typeof McpListResultSchema>;
export const McpServerResultSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ server: McpServerConfigSchema }),
);
export type McpServerResult = z.infer<typeof McpServerResultSchema>;
export const McpUpsertParamsSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ server: McpServerConfigSchema }),
);
export type McpUpsertParams = z.infer<typeof McpUpsertParamsSchema>;
export const McpRemoveResultSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ removed: z.boolean() }),
);
export type McpRemoveResult = z.infer<typeof McpRemoveResultSchema>;
export const McpStatusListResultSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ servers: z.array(McpServerStatusSchema) }),
);
export type McpStatusListResult = z.infer<typeof McpStatusListResultSchema>;

/** `mcp/test`: a probe of a configuration that is not saved; a failed probe is a result, not an error. */
export const McpTestResultSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({
    success: z.boolean(),
    toolCount: z.number().int().nonnegative().optional(),
    errorCode: z.string().optional(),
    errorMessage: z.string().optional(),
  }),
);
export type McpTestResult = z.infer<typeof McpTestResultSchema>;

/** Broadcast when one server's live state changes (only where the servers run). */
export const McpStatusUpdatedParamsSchema = lazySchema("appserver.mcp", () =>
  z.looseObject({ server: McpServerStatusSchema }),
);
export type McpStatusUpdatedParams = z.infer<typeof McpStatusUpdatedParamsSchema>;

export const mcpMethods = {
  "mcp/list": method(EmptyObjectSchema, McpListResultSchema),
  "mcp/get": method(McpNameParamsSchema, McpServerResultSchema),
  "mcp/upsert": method(McpUpsertParamsSchema, McpServerResultSchema),
  "mcp/remove": method(McpNameParamsSchema, McpRemoveResultSchema),
  "mcp/test": method(McpUpsertParamsSchema, McpTestResultSchema),
} as const;

/** Served only where the servers run in the same process (the daemon). */
export const mcpStatusMethods = {
  "mcp/status/list": method(EmptyObjectSchema, McpStatusListResultSchema),
} as const;
