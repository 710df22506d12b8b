/**
 * `nexo/admin/mcp/*`: the MCP servers of `mcp.yaml`, flattened into one editable shape whose
 * `transport` decides which fields matter (stdio: command/args/env/cwd; the HTTP transports:
 * url/headers).
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { NonEmptyStringSchema, NoParamsSchema } from "./common.js";

export const McpTransportSchema = lazySchema("admin.mcp", () =>
  z.enum(["stdio", "streamable_http", "sse", "auto"]),
);
export type McpTransport = z.infer<typeof McpTransportSchema>;

export const McpServerSummarySchema = lazySchema("admin.mcp", () =>
  z.looseObject({
    name: NonEmptyStringSchema,
    transport: McpTransportSchema,
    log_level: z.string().optional(),
  }),
);
export type McpServerSummary = z.infer<typeof McpServerSummarySchema>;

const McpServerFields = lazySchema("admin.mcp", () =>
  z.looseObject({
    name: NonEmptyStringSchema,
    transport: McpTransportSchema,
    command: z.string().optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    log_level: z.string().optional(),
    /** Per-server override of the global context passthrough flag. */
    context_passthrough: z.boolean().optional(),
  }),
);

/**
 * A server definition; the transport's own connection field is required. Lazy like its fields:
 * calling `superRefine` on them at import would build them in every daemon.
 */
export const McpServerDetailSchema = lazySchema("admin.mcp", () =>
  McpServerFields.superRefine((server, ctx) => {
    if (server.transport === "stdio" && !server.command?.trim()) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "a stdio server needs a command" });
    }
    if (server.transport !== "stdio" && !server.url?.trim()) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `a ${server.transport} server needs a url` });
    }
  }),
);
export type McpServerDetail = z.infer<typeof McpServerDetailSchema>;

export const McpListParamsSchema = NoParamsSchema;
export type McpListParams = z.infer<typeof McpListParamsSchema>;

export const McpListResultSchema = lazySchema("admin.mcp", () =>
  z.looseObject({ servers: z.array(McpServerSummarySchema) }),
);
export type McpListResult = z.infer<typeof McpListResultSchema>;

export const McpGetParamsSchema = lazySchema("admin.mcp", () =>
  z.looseObject({ name: NonEmptyStringSchema }),
);
export type McpGetParams = z.infer<typeof McpGetParamsSchema>;

/** `server: null` is "not found", not an error. */
export const McpGetResultSchema = lazySchema("admin.mcp", () =>
  z.looseObject({ server: McpServerDetailSchema.nullable() }),
);
export type McpGetResult = z.infer<typeof McpGetResultSchema>;

export const McpUpsertParamsSchema = McpServerDetailSchema;
export type McpUpsertParams = McpServerDetail;

export const McpUpsertResultSchema = lazySchema("admin.mcp", () =>
  z.looseObject({
    server: McpServerDetailSchema,
    created: z.boolean(),
  }),
);
export type McpUpsertResult = z.infer<typeof McpUpsertResultSchema>;

export const McpDeleteParamsSchema = lazySchema("admin.mcp", () =>
  z.looseObject({ name: NonEmptyStringSchema }),
);
export type McpDeleteParams = z.infer<typeof McpDeleteParamsSchema>;

export const McpDeleteResultSchema = lazySchema("admin.mcp", () => z.looseObject({ removed: z.boolean() }));
export type McpDeleteResult = z.infer<typeof McpDeleteResultSchema>;
