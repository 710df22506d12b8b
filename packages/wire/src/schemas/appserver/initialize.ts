/**
 * The handshake: `initialize` (request, first on every connection) then `initialized`
 * (notification). Client capabilities decide which notifications and item types the connection
 * receives; server capabilities tell the client which method families exist.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { ToolApprovalDescriptorSchema } from "./tools.js";

export const ClientInfoSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    name: z.string().min(1),
    title: z.string().optional(),
    version: z.string(),
  }),
);
export type ClientInfo = z.infer<typeof ClientInfoSchema>;

/** Per-kind media limits an external channel adapter accepts for `ext/channel/send`. */
const ChannelMediaConstraintsSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    maxBytes: z.number().int().nonnegative().optional(),
    allowedMimeTypes: z.array(z.string()).optional(),
    allowedExtensions: z.array(z.string()).optional(),
    supportsHostPath: z.boolean().optional(),
    supportsUrl: z.boolean().optional(),
    supportsBase64: z.boolean().optional(),
    supportsCaption: z.boolean().optional(),
  }),
);

export const ChannelToolDescriptorSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    name: z.string().min(1),
    description: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    display: z
      .looseObject({
        icon: z.string().optional(),
        title: z.string().optional(),
        subtitle: z.string().optional(),
      })
      .optional(),
    requiresChatContext: z.boolean().optional(),
    approval: ToolApprovalDescriptorSchema.optional(),
    deferLoading: z.boolean().optional(),
  }),
);
export type ChannelToolDescriptor = z.infer<typeof ChannelToolDescriptorSchema>;

/** Marks the connection as an external channel adapter (a bot bridge) rather than a UI. */
export const ChannelAdapterCapabilitySchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    channelName: z.string().min(1),
    deliveryCapabilities: z
      .looseObject({
        structuredDelivery: z.boolean().optional(),
        media: z
          .looseObject({
            file: ChannelMediaConstraintsSchema.optional(),
            audio: ChannelMediaConstraintsSchema.optional(),
            image: ChannelMediaConstraintsSchema.optional(),
            video: ChannelMediaConstraintsSchema.optional(),
          })
          .optional(),
      })
      .optional(),
    channelTools: z.array(ChannelToolDescriptorSchema).optional(),
  }),
);
export type ChannelAdapterCapability = z.infer<typeof ChannelAdapterCapabilitySchema>;

/**
 * Every flag is optional; when absent the server applies its default (approvalSupport,
 * streamingSupport and configChange default to true, the item-projection flags to false).
 */
export const ClientCapabilitiesSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    approvalSupport: z.boolean().optional(),
    streamingSupport: z.boolean().optional(),
    commandExecutionStreaming: z.boolean().optional(),
    toolExecutionLifecycle: z.boolean().optional(),
    backgroundTerminals: z.boolean().optional(),
    configChange: z.boolean().optional(),
    /** Exact, case-sensitive notification method names this connection does not want. */
    optOutNotificationMethods: z.array(z.string()).optional(),
    acpExtensions: z
      .looseObject({
        fsReadTextFile: z.boolean().optional(),
        fsWriteTextFile: z.boolean().optional(),
        terminalCreate: z.boolean().optional(),
        extensions: z.array(z.string()).optional(),
      })
      .optional(),
    nodeRepl: z.looseObject({ backend: z.string().min(1) }).optional(),
    browserUse: z
      .looseObject({
        backend: z.string().min(1),
        protocolVersion: z.number().int().optional(),
        supportsCancel: z.boolean().optional(),
      })
      .optional(),
    channelAdapter: ChannelAdapterCapabilitySchema.optional(),
  }),
);
export type ClientCapabilities = z.infer<typeof ClientCapabilitiesSchema>;

export const InitializeParamsSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    clientInfo: ClientInfoSchema,
    capabilities: ClientCapabilitiesSchema.optional(),
  }),
);
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;

export const ServerInfoSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    name: z.string().min(1),
    version: z.string(),
    /** The wire protocol's own version, independent of the server build. */
    protocolVersion: z.string().min(1),
    extensions: z.array(z.string()).optional(),
  }),
);
export type ServerInfo = z.infer<typeof ServerInfoSchema>;

/**
 * One flag per method family; a family whose flag is off answers -32601. The reference omits false
 * flags, so all are optional and absence means "not supported".
 */
export const ServerCapabilitiesSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    threadManagement: z.boolean().optional(),
    threadSubscriptions: z.boolean().optional(),
    approvalFlow: z.boolean().optional(),
    modeSwitch: z.boolean().optional(),
    configOverride: z.boolean().optional(),
    backgroundTerminals: z.boolean().optional(),
    cronManagement: z.boolean().optional(),
    heartbeatManagement: z.boolean().optional(),
    skillsManagement: z.boolean().optional(),
    pluginManagement: z.boolean().optional(),
    skillVariants: z.boolean().optional(),
    commandManagement: z.boolean().optional(),
    automations: z.boolean().optional(),
    channelStatus: z.boolean().optional(),
    modelCatalogManagement: z.boolean().optional(),
    workspaceConfigManagement: z.boolean().optional(),
    mcpManagement: z.boolean().optional(),
    mcpServerOrigins: z.boolean().optional(),
    mcpStatus: z.boolean().optional(),
    externalChannelManagement: z.boolean().optional(),
    subAgentManagement: z.boolean().optional(),
    subAgentSessions: z.boolean().optional(),
    /** Module-provided capabilities keyed by extension name, e.g. `welcomeSuggestions: true`. */
    extensions: z.record(z.string(), z.unknown()).optional(),
  }),
);
export type ServerCapabilities = z.infer<typeof ServerCapabilitiesSchema>;

export const InitializeResultSchema = lazySchema("appserver.initialize", () =>
  z.looseObject({
    serverInfo: ServerInfoSchema,
    capabilities: ServerCapabilitiesSchema,
    /** Not in the reference spec, but its server sends it and its desktop client reads it. */
    dashboardUrl: z.string().optional(),
  }),
);
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

/** The client's acknowledgement; the server sends no notifications before it. */
export const InitializedParamsSchema = lazySchema("appserver.initialize", () => z.looseObject({}));
export type InitializedParams = z.infer<typeof InitializedParamsSchema>;
