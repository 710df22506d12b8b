/**
 * Client-executed tools: a client declares `dynamicTools` on `thread/start`, and when the model calls
 * one the server sends `item/tool/call` (a server→client request) to the connection that declared it.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { ApprovalTypeSchema } from "./approvals.js";

/** Which argument of a client-executed tool the server's approval policy inspects. */
export const ToolApprovalDescriptorSchema = lazySchema("appserver.tools", () =>
  z.looseObject({
    kind: ApprovalTypeSchema,
    targetArgument: z.string().min(1),
    operation: z.string().optional(),
    operationArgument: z.string().optional(),
  }),
);
export type ToolApprovalDescriptor = z.infer<typeof ToolApprovalDescriptorSchema>;

/** `(namespace, name)` must be unique within one `thread/start`. */
export const DynamicToolSpecSchema = lazySchema("appserver.tools", () =>
  z.looseObject({
    namespace: z.string().optional(),
    name: z.string().min(1),
    description: z.string(),
    /** JSON Schema of the arguments. */
    inputSchema: z.record(z.string(), z.unknown()),
    deferLoading: z.boolean().optional(),
    approval: ToolApprovalDescriptorSchema.optional(),
  }),
);
export type DynamicToolSpec = z.infer<typeof DynamicToolSpecSchema>;

/** One piece of a tool's answer; `text` is the common case, media travel as URL or base64. */
export const ToolContentItemSchema = lazySchema("appserver.tools", () =>
  z.looseObject({
    type: z.string().min(1),
    text: z.string().optional(),
    url: z.string().optional(),
    dataBase64: z.string().optional(),
    mediaType: z.string().optional(),
  }),
);
export type ToolContentItem = z.infer<typeof ToolContentItemSchema>;

export const ToolCallParamsSchema = lazySchema("appserver.tools", () =>
  z.looseObject({
    threadId: z.string().min(1),
    turnId: z.string().min(1),
    callId: z.string().min(1),
    namespace: z.string().optional(),
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()),
  }),
);
export type ToolCallParams = z.infer<typeof ToolCallParamsSchema>;

export const ToolCallResultSchema = lazySchema("appserver.tools", () =>
  z.looseObject({
    success: z.boolean(),
    contentItems: z.array(ToolContentItemSchema).optional(),
    structuredResult: z.unknown().optional(),
    errorCode: z.string().optional(),
    errorMessage: z.string().optional(),
  }),
);
export type ToolCallResult = z.infer<typeof ToolCallResultSchema>;
