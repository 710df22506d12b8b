/**
 * Items: the units inside a turn (user message, agent text, reasoning, tool calls and results,
 * approvals, errors...). `type` selects the payload's shape; `payloadKind` mirrors it. Item ids are
 * unique only within their turn, so key items by `(turnId, id)`.
 *
 * `ItemSchema` is the closed union of the item types we emit. A client that must survive item types
 * added later reads with `ItemEnvelopeSchema` first and narrows with `ItemSchema` when it knows the type.
 */
import { z } from "zod";
import { lazySchema, sharedFields } from "../lazy.js";
import { ApprovalDecisionSchema, ApprovalTypeSchema } from "./approvals.js";
import { InputPartSchema, IsoTimestampSchema } from "./common.js";
import { ToolContentItemSchema } from "./tools.js";

export const ItemTypeSchema = lazySchema("appserver.items", () =>
  z.enum([
    "userMessage",
    "agentMessage",
    "reasoningContent",
    "toolCall",
    "toolResult",
    "commandExecution",
    "fileChange",
    "toolExecution",
    "pluginFunctionCall",
    "dynamicToolCall",
    "approvalRequest",
    "approvalResponse",
    "error",
    "systemNotice",
  ]),
);
export type ItemType = z.infer<typeof ItemTypeSchema>;

/** `started` → (`streaming`) → `completed`; items that are born finished arrive as `completed`. */
export const ItemStatusSchema = lazySchema("appserver.items", () =>
  z.enum(["started", "streaming", "completed"]),
);
export type ItemStatus = z.infer<typeof ItemStatusSchema>;

const jsonObject = lazySchema("appserver.items", () => z.record(z.string(), z.unknown()));

// --- payloads -------------------------------------------------------------------------------------

export const UserMessageImageSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    path: z.string().min(1),
    mimeType: z.string().optional(),
    fileName: z.string().optional(),
  }),
);
export type UserMessageImage = z.infer<typeof UserMessageImageSchema>;

/** `queued` came off the thread's queue, `guidance` was steered into a running turn. */
export const DeliveryModeSchema = lazySchema("appserver.items", () =>
  z.enum(["normal", "queued", "guidance"]),
);
export type DeliveryMode = z.infer<typeof DeliveryModeSchema>;

/** Set when no human typed the message. */
export const TriggerKindSchema = lazySchema("appserver.items", () =>
  z.enum(["heartbeat", "cron", "automation"]),
);
export type TriggerKind = z.infer<typeof TriggerKindSchema>;

export const UserMessagePayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    /** For display only; the parts are the source of truth. */
    text: z.string(),
    /** The parts as the client sent them (drafts are rebuilt from these). */
    nativeInputParts: z.array(InputPartSchema).optional(),
    /** The parts after expansion (file contents, skills), i.e. what the model saw. */
    materializedInputParts: z.array(InputPartSchema).optional(),
    deliveryMode: DeliveryModeSchema.optional(),
    senderId: z.string().optional(),
    senderName: z.string().optional(),
    senderRole: z.string().optional(),
    channelName: z.string().optional(),
    channelContext: z.string().optional(),
    groupId: z.string().optional(),
    images: z.array(UserMessageImageSchema).optional(),
    triggerKind: TriggerKindSchema.optional(),
    triggerLabel: z.string().optional(),
    triggerRefId: z.string().optional(),
  }),
);
export type UserMessagePayload = z.infer<typeof UserMessagePayloadSchema>;

export const AgentMessagePayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({ text: z.string() }),
);
export type AgentMessagePayload = z.infer<typeof AgentMessagePayloadSchema>;

export const ReasoningContentPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({ text: z.string() }),
);
export type ReasoningContentPayload = z.infer<typeof ReasoningContentPayloadSchema>;

/** The final arguments are in `item/completed`; `item/toolCall/argumentsDelta` may stream them first. */
export const ToolCallPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    toolName: z.string().min(1),
    arguments: jsonObject.optional(),
    callId: z.string().min(1),
  }),
);
export type ToolCallPayload = z.infer<typeof ToolCallPayloadSchema>;

/** Correlates with its `toolCall` by `callId`. `result` is the text the model saw. */
export const ToolResultPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    callId: z.string().min(1),
    result: z.string(),
    success: z.boolean(),
  }),
);
export type ToolResultPayload = z.infer<typeof ToolResultPayloadSchema>;

export const CommandExecutionStatusSchema = lazySchema("appserver.items", () =>
  z.enum(["inProgress", "completed", "failed", "cancelled", "backgrounded", "killed", "lost"]),
);
export type CommandExecutionStatus = z.infer<typeof CommandExecutionStatusSchema>;

/**
 * A shell command's live view, sent only to clients that asked for `commandExecutionStreaming`;
 * the `toolCall`/`toolResult` pair for the same `callId` is still emitted.
 */
export const CommandExecutionPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    command: z.string(),
    workingDirectory: z.string().optional(),
    source: z.enum(["host", "sandbox"]).optional(),
    status: CommandExecutionStatusSchema,
    aggregatedOutput: z.string(),
    sessionId: z.string().optional(),
    outputPath: z.string().optional(),
    originalOutputChars: z.number().int().nonnegative().optional(),
    truncated: z.boolean().optional(),
    backgroundReason: z.string().optional(),
    exitCode: z.number().int().optional(),
    durationMs: z.number().nonnegative().optional(),
    callId: z.string().optional(),
  }),
);
export type CommandExecutionPayload = z.infer<typeof CommandExecutionPayloadSchema>;

export const FileChangeKindSchema = lazySchema("appserver.items", () => z.enum(["add", "update", "delete"]));
export type FileChangeKind = z.infer<typeof FileChangeKindSchema>;

/** One file a tool call changed: `diff` is a unified diff (`---`/`+++` headers, `@@` hunks). */
export const FileChangeEntrySchema = lazySchema("appserver.items", () =>
  z.looseObject({
    path: z.string().min(1),
    kind: FileChangeKindSchema,
    diff: z.string(),
  }),
);
export type FileChangeEntry = z.infer<typeof FileChangeEntrySchema>;

/** `declined` when the approval was refused, `failed` when the write failed. */
export const FileChangeStatusSchema = lazySchema("appserver.items", () =>
  z.enum(["inProgress", "completed", "failed", "declined"]),
);
export type FileChangeStatus = z.infer<typeof FileChangeStatusSchema>;

/**
 * What a file-writing tool call did to the workspace, with its diff (nexo's addition, in the shape
 * Codex's app-server uses; DotCraft clients ignore item types they do not know). The
 * `toolCall`/`toolResult` pair for the same `callId` is still emitted.
 */
export const FileChangePayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    callId: z.string().min(1),
    changes: z.array(FileChangeEntrySchema),
    status: FileChangeStatusSchema,
  }),
);
export type FileChangePayload = z.infer<typeof FileChangePayloadSchema>;

export const ToolExecutionStatusSchema = lazySchema("appserver.items", () =>
  z.enum(["inProgress", "completed", "failed", "cancelled"]),
);
export type ToolExecutionStatus = z.infer<typeof ToolExecutionStatusSchema>;

/**
 * Early per-call progress for parallel tool cards (`toolExecutionLifecycle` clients only); the
 * matching `toolResult` stays the authoritative result.
 */
export const ToolExecutionPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    callId: z.string().min(1),
    toolName: z.string().min(1),
    status: ToolExecutionStatusSchema,
    success: z.boolean().optional(),
    durationMs: z.number().nonnegative().optional(),
    /** At most 4096 characters. */
    resultPreview: z.string().max(4096).optional(),
    errorMessage: z.string().optional(),
  }),
);
export type ToolExecutionPayload = z.infer<typeof ToolExecutionPayloadSchema>;

/** Replaces the `toolCall`/`toolResult` pair for tools contributed by plugins and channel adapters. */
export const PluginFunctionCallPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    pluginId: z.string().min(1),
    namespace: z.string().optional(),
    functionName: z.string().min(1),
    callId: z.string().min(1),
    arguments: jsonObject.optional(),
    contentItems: z.array(ToolContentItemSchema).optional(),
    structuredResult: z.unknown().optional(),
    success: z.boolean(),
    errorCode: z.string().optional(),
    errorMessage: z.string().optional(),
  }),
);
export type PluginFunctionCallPayload = z.infer<typeof PluginFunctionCallPayloadSchema>;

/** Replaces the `toolCall`/`toolResult` pair for tools the client declared on `thread/start`. */
export const DynamicToolCallPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    namespace: z.string().optional(),
    toolName: z.string().min(1),
    callId: z.string().min(1),
    arguments: jsonObject.optional(),
    contentItems: z.array(ToolContentItemSchema).optional(),
    structuredResult: z.unknown().optional(),
    /** Absent while the call is still running. */
    success: z.boolean().optional(),
    errorCode: z.string().optional(),
    errorMessage: z.string().optional(),
  }),
);
export type DynamicToolCallPayload = z.infer<typeof DynamicToolCallPayloadSchema>;

/** The record of an `item/approval/request`; same fields as its params minus the ids. */
export const ApprovalRequestPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    approvalType: ApprovalTypeSchema,
    operation: z.string(),
    target: z.string(),
    requestId: z.string().min(1),
    scopeKey: z.string(),
    reason: z.string(),
  }),
);
export type ApprovalRequestPayload = z.infer<typeof ApprovalRequestPayloadSchema>;

/** `approved` is the legacy boolean view of `decision` (true for the three accept decisions). */
export const ApprovalResponsePayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    requestId: z.string().min(1),
    approved: z.boolean(),
    decision: ApprovalDecisionSchema,
  }),
);
export type ApprovalResponsePayload = z.infer<typeof ApprovalResponsePayloadSchema>;

/** `fatal` errors end the turn (it then fails); `code` is machine-readable, e.g. `approval_timeout`. */
export const ErrorPayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    message: z.string(),
    code: z.string().optional(),
    fatal: z.boolean().optional(),
  }),
);
export type ErrorPayload = z.infer<typeof ErrorPayloadSchema>;

/** A divider in the timeline for maintenance the server did (compaction, memory consolidation). */
export const SystemNoticePayloadSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    /** `compacted` or `memoryConsolidated` today; deliberately open so new notices stay additive. */
    kind: z.string().min(1),
    trigger: z.string().optional(),
    mode: z.string().optional(),
    tokensBefore: z.number().int().nonnegative().optional(),
    tokensAfter: z.number().int().nonnegative().optional(),
    percentLeftAfter: z.number().min(0).max(1).optional(),
    clearedToolResults: z.number().int().nonnegative().optional(),
  }),
);
export type SystemNoticePayload = z.infer<typeof SystemNoticePayloadSchema>;

// --- items ----------------------------------------------------------------------------------------

/** The fields every item has. */
const itemBase = sharedFields(() => ({
  id: z.string().min(1),
  turnId: z.string().min(1),
  status: ItemStatusSchema,
  createdAt: IsoTimestampSchema,
  completedAt: IsoTimestampSchema.optional(),
  payloadKind: z.string().optional(),
}));

/** Any item, whatever its type, with the payload left unparsed. */
export const ItemEnvelopeSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.string().min(1),
    payload: z.unknown(),
  }),
);
export type ItemEnvelope = z.infer<typeof ItemEnvelopeSchema>;

export const UserMessageItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("userMessage"),
    payload: UserMessagePayloadSchema,
  }),
);
export const AgentMessageItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("agentMessage"),
    payload: AgentMessagePayloadSchema,
  }),
);
export const ReasoningContentItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("reasoningContent"),
    payload: ReasoningContentPayloadSchema,
  }),
);
export const ToolCallItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("toolCall"),
    payload: ToolCallPayloadSchema,
  }),
);
export const ToolResultItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("toolResult"),
    payload: ToolResultPayloadSchema,
  }),
);
export const CommandExecutionItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("commandExecution"),
    payload: CommandExecutionPayloadSchema,
  }),
);
export const FileChangeItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("fileChange"),
    payload: FileChangePayloadSchema,
  }),
);
export const ToolExecutionItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("toolExecution"),
    payload: ToolExecutionPayloadSchema,
  }),
);
export const PluginFunctionCallItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("pluginFunctionCall"),
    payload: PluginFunctionCallPayloadSchema,
  }),
);
export const DynamicToolCallItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("dynamicToolCall"),
    payload: DynamicToolCallPayloadSchema,
  }),
);
export const ApprovalRequestItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("approvalRequest"),
    payload: ApprovalRequestPayloadSchema,
  }),
);
export const ApprovalResponseItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("approvalResponse"),
    payload: ApprovalResponsePayloadSchema,
  }),
);
export const ErrorItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("error"),
    payload: ErrorPayloadSchema,
  }),
);
export const SystemNoticeItemSchema = lazySchema("appserver.items", () =>
  z.looseObject({
    ...itemBase(),
    type: z.literal("systemNotice"),
    payload: SystemNoticePayloadSchema,
  }),
);

export const ItemSchema = lazySchema("appserver.items", () =>
  z.discriminatedUnion("type", [
    UserMessageItemSchema,
    AgentMessageItemSchema,
    ReasoningContentItemSchema,
    ToolCallItemSchema,
    ToolResultItemSchema,
    CommandExecutionItemSchema,
    FileChangeItemSchema,
    ToolExecutionItemSchema,
    PluginFunctionCallItemSchema,
    DynamicToolCallItemSchema,
    ApprovalRequestItemSchema,
    ApprovalResponseItemSchema,
    ErrorItemSchema,
    SystemNoticeItemSchema,
  ]),
);
export type Item = z.infer<typeof ItemSchema>;
export type UserMessageItem = z.infer<typeof UserMessageItemSchema>;
export type AgentMessageItem = z.infer<typeof AgentMessageItemSchema>;
export type ReasoningContentItem = z.infer<typeof ReasoningContentItemSchema>;
export type ToolCallItem = z.infer<typeof ToolCallItemSchema>;
export type ToolResultItem = z.infer<typeof ToolResultItemSchema>;
export type CommandExecutionItem = z.infer<typeof CommandExecutionItemSchema>;
export type FileChangeItem = z.infer<typeof FileChangeItemSchema>;
export type ToolExecutionItem = z.infer<typeof ToolExecutionItemSchema>;
export type PluginFunctionCallItem = z.infer<typeof PluginFunctionCallItemSchema>;
export type DynamicToolCallItem = z.infer<typeof DynamicToolCallItemSchema>;
export type ApprovalRequestItem = z.infer<typeof ApprovalRequestItemSchema>;
export type ApprovalResponseItem = z.infer<typeof ApprovalResponseItemSchema>;
export type ErrorItem = z.infer<typeof ErrorItemSchema>;
export type SystemNoticeItem = z.infer<typeof SystemNoticeItemSchema>;
