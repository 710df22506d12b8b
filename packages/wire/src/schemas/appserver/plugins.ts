/**
 * Plugins (`pluginManagement`): the plugins the server can load, whether each is enabled, and what
 * it contributes. Installation is separate from enablement: `plugin/setEnabled` only switches an
 * installed plugin on or off; `plugin/install` and `plugin/remove` manage a server's own catalog of
 * bundled plugins (a server without one refuses them with -32602).
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";

export const PluginFunctionInfoSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    name: z.string(),
    namespace: z.string().nullable().optional(),
    description: z.string(),
  }),
);
export type PluginFunctionInfo = z.infer<typeof PluginFunctionInfoSchema>;

export const PluginSkillInfoSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    name: z.string(),
    description: z.string(),
    displayName: z.string().nullable().optional(),
    enabled: z.boolean(),
  }),
);

export const PluginMcpServerInfoSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    name: z.string(),
    runtimeName: z.string(),
    transport: z.enum(["stdio", "streamableHttp"]),
    enabled: z.boolean(),
    active: z.boolean(),
    shadowedBy: z.enum(["workspace", "plugin"]).nullable().optional(),
  }),
);

export const PluginDiagnosticSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    severity: z.string(),
    code: z.string(),
    message: z.string(),
    pluginId: z.string().nullable().optional(),
    path: z.string().nullable().optional(),
  }),
);
export type PluginDiagnostic = z.infer<typeof PluginDiagnosticSchema>;

export const PluginInfoSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    id: z.string().min(1),
    displayName: z.string(),
    description: z.string().nullable().optional(),
    version: z.string().nullable().optional(),
    enabled: z.boolean(),
    /** The plugin is where the server loads plugins from and can contribute at runtime. */
    installed: z.boolean(),
    /** A catalog entry `plugin/install` would deploy. */
    installable: z.boolean(),
    /** `plugin/remove` would delete it (only plugins the server itself deployed). */
    removable: z.boolean(),
    source: z.string(),
    rootPath: z.string(),
    interface: z
      .looseObject({
        displayName: z.string().nullable().optional(),
        shortDescription: z.string().nullable().optional(),
        developerName: z.string().nullable().optional(),
        category: z.string().nullable().optional(),
        capabilities: z.array(z.string()).optional(),
      })
      .nullable()
      .optional(),
    functions: z.array(PluginFunctionInfoSchema),
    skills: z.array(PluginSkillInfoSchema),
    mcpServers: z.array(PluginMcpServerInfoSchema),
    diagnostics: z.array(PluginDiagnosticSchema).optional(),
  }),
);
export type PluginInfo = z.infer<typeof PluginInfoSchema>;

export const PluginListParamsSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    /** Default true; false leaves out the disabled plugins. */
    includeDisabled: z.boolean().optional(),
  }),
);
export type PluginListParams = z.infer<typeof PluginListParamsSchema>;

export const PluginListResultSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({
    plugins: z.array(PluginInfoSchema),
    /** Problems found while discovering plugins (a manifest that cannot be read, a plugin that failed). */
    diagnostics: z.array(PluginDiagnosticSchema),
  }),
);
export type PluginListResult = z.infer<typeof PluginListResultSchema>;

export const PluginIdParamsSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({ id: z.string().min(1) }),
);
export type PluginIdParams = z.infer<typeof PluginIdParamsSchema>;

export const PluginSetEnabledParamsSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({ id: z.string().min(1), enabled: z.boolean() }),
);
export type PluginSetEnabledParams = z.infer<typeof PluginSetEnabledParamsSchema>;

export const PluginResultSchema = lazySchema("appserver.plugins", () =>
  z.looseObject({ plugin: PluginInfoSchema }),
);
export type PluginResult = z.infer<typeof PluginResultSchema>;

export const pluginManagementMethods = {
  "plugin/list": method(PluginListParamsSchema, PluginListResultSchema),
  "plugin/view": method(PluginIdParamsSchema, PluginResultSchema),
  "plugin/install": method(PluginIdParamsSchema, PluginResultSchema),
  "plugin/remove": method(PluginIdParamsSchema, PluginResultSchema),
  "plugin/setEnabled": method(PluginSetEnabledParamsSchema, PluginResultSchema),
} as const;
