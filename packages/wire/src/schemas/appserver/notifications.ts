/**
 * Server→client notifications. Thread-scoped ones (turn/*, item/*, usage, progress, queue) reach
 * the connection that started the turn and every connection subscribed to the thread; workspace
 * broadcasts reach every connection. Clients dedupe by thread and turn id: the same event can
 * arrive twice by design.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { ContextUsageSchema, IsoTimestampSchema, TokenUsageSchema } from "./common.js";
import { ApprovalResponseItemSchema, ItemSchema } from "./items.js";
import { ThreadRuntimeSchema, ThreadSchema, ThreadStatusSchema } from "./threads.js";
import { QueuedTurnInputSchema, TurnSchema } from "./turns.js";

const id = lazySchema("appserver.notifications", () => z.string().min(1));
const tokenCount = lazySchema("appserver.notifications", () => z.number().int().nonnegative());

// --- turns ----------------------------------------------------------------------------------------

/** Carries the user-message item. Always after the `turn/start` response. */
export const TurnStartedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ turn: TurnSchema }),
);
export type TurnStartedParams = z.infer<typeof TurnStartedParamsSchema>;

/** Carries every item and the token usage. */
export const TurnCompletedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ turn: TurnSchema }),
);
export type TurnCompletedParams = z.infer<typeof TurnCompletedParamsSchema>;

/**
 * Agent failures surface here, never as an RPC error. `code` is set when the failure has one of the
 * protocol's error codes (-32020 when an approval timed out, which clients show on the approval card).
 */
export const TurnFailedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    turn: TurnSchema,
    error: z.string(),
    code: z.number().int().optional(),
  }),
);
export type TurnFailedParams = z.infer<typeof TurnFailedParamsSchema>;

export const TurnCancelledParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ turn: TurnSchema, reason: z.string() }),
);
export type TurnCancelledParams = z.infer<typeof TurnCancelledParamsSchema>;

// --- items ----------------------------------------------------------------------------------------

/** `item/started` and `item/completed`; the completed item is the final state. */
export const ItemLifecycleParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ threadId: id, turnId: id, item: ItemSchema }),
);
export type ItemLifecycleParams = z.infer<typeof ItemLifecycleParamsSchema>;

const deltaBase = { threadId: id, turnId: id, itemId: id, delta: z.string().min(1) };

export const AgentMessageDeltaParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    ...deltaBase,
    deltaKind: z.literal("agentMessage"),
  }),
);
export type AgentMessageDeltaParams = z.infer<typeof AgentMessageDeltaParamsSchema>;

export const ReasoningDeltaParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    ...deltaBase,
    deltaKind: z.literal("reasoningContent"),
  }),
);
export type ReasoningDeltaParams = z.infer<typeof ReasoningDeltaParamsSchema>;

/** `delta` is a raw fragment of the arguments' JSON text; name and call id usually only come first. */
export const ToolCallArgumentsDeltaParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    ...deltaBase,
    deltaKind: z.literal("toolCallArguments"),
    toolName: z.string().optional(),
    callId: z.string().optional(),
  }),
);
export type ToolCallArgumentsDeltaParams = z.infer<typeof ToolCallArgumentsDeltaParamsSchema>;

/** Only for clients that asked for `commandExecutionStreaming`. */
export const CommandExecutionOutputDeltaParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject(deltaBase),
);
export type CommandExecutionOutputDeltaParams = z.infer<typeof CommandExecutionOutputDeltaParamsSchema>;

/** Sent between `item/started` and `item/completed` of the `approvalResponse` item. */
export const ApprovalResolvedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    threadId: id,
    turnId: id,
    item: ApprovalResponseItemSchema,
  }),
);
export type ApprovalResolvedParams = z.infer<typeof ApprovalResolvedParamsSchema>;

/** Per model call deltas (sub-agents excluded); the totals are for the turn so far. */
export const UsageDeltaParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    threadId: id,
    turnId: id,
    inputTokens: tokenCount,
    outputTokens: tokenCount,
    totalInputTokens: tokenCount.optional(),
    totalOutputTokens: tokenCount.optional(),
    contextUsage: ContextUsageSchema.optional(),
  }),
);
export type UsageDeltaParams = z.infer<typeof UsageDeltaParamsSchema>;

// --- thread-scoped status -------------------------------------------------------------------------

/** A full snapshot of every sub-agent of the turn, about every 200 ms. */
export const SubAgentProgressParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    threadId: id,
    turnId: id,
    entries: z.array(
      z.looseObject({
        label: z.string(),
        currentTool: z.string().optional(),
        inputTokens: tokenCount,
        outputTokens: tokenCount,
        isCompleted: z.boolean(),
      }),
    ),
  }),
);
export type SubAgentProgressParams = z.infer<typeof SubAgentProgressParamsSchema>;

export const SystemEventKindSchema = lazySchema("appserver.notifications", () =>
  z.enum([
    "compactWarning",
    "compactError",
    "compacting",
    "compacted",
    "compactSkipped",
    "compactFailed",
    "consolidating",
    "consolidated",
    "consolidationSkipped",
    "consolidationFailed",
  ]),
);
export type SystemEventKind = z.infer<typeof SystemEventKindSchema>;

/** Context maintenance progress of a thread (compaction, memory consolidation). */
export const ThreadSystemEventParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    threadId: id,
    turnId: z.string().optional(),
    kind: SystemEventKindSchema,
    message: z.string().optional(),
    percentLeft: z.number().min(0).max(1).optional(),
    tokenCount: tokenCount.optional(),
  }),
);

/**
 * Sent to a channel adapter connection whose channel the server does not accept (not among its
 * external channels, or not enabled), right before the server closes it. It names no thread.
 */
export const ChannelRejectedEventParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    kind: z.literal("channelRejected"),
    channelName: z.string(),
    message: z.string(),
  }),
);
export type ChannelRejectedEventParams = z.infer<typeof ChannelRejectedEventParamsSchema>;

export const SystemEventParamsSchema = lazySchema("appserver.notifications", () =>
  z.union([ThreadSystemEventParamsSchema, ChannelRejectedEventParamsSchema]),
);
export type SystemEventParams = z.infer<typeof SystemEventParamsSchema>;

export const ThreadQueueUpdatedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    threadId: id,
    queuedInputs: z.array(QueuedTurnInputSchema),
  }),
);
export type ThreadQueueUpdatedParams = z.infer<typeof ThreadQueueUpdatedParamsSchema>;

/** `resumedBy` is the resuming client's `clientInfo.name`. */
export const ThreadResumedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ thread: ThreadSchema, resumedBy: z.string() }),
);
export type ThreadResumedParams = z.infer<typeof ThreadResumedParamsSchema>;

export const ThreadStatusChangedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    threadId: id,
    previousStatus: ThreadStatusSchema,
    newStatus: ThreadStatusSchema,
  }),
);
export type ThreadStatusChangedParams = z.infer<typeof ThreadStatusChangedParamsSchema>;

// --- workspace broadcasts -------------------------------------------------------------------------

export const ThreadStartedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ thread: ThreadSchema }),
);
export type ThreadStartedParams = z.infer<typeof ThreadStartedParamsSchema>;

export const ThreadRenamedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ threadId: id, displayName: z.string().min(1) }),
);
export type ThreadRenamedParams = z.infer<typeof ThreadRenamedParamsSchema>;

/** Never sent to the deleting connection; its RPC response is the signal. */
export const ThreadDeletedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ threadId: id }),
);
export type ThreadDeletedParams = z.infer<typeof ThreadDeletedParamsSchema>;

/** The latest snapshot replaces earlier ones. */
export const ThreadRuntimeChangedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ threadId: id, runtime: ThreadRuntimeSchema }),
);
export type ThreadRuntimeChangedParams = z.infer<typeof ThreadRuntimeChangedParamsSchema>;

export const SubAgentGraphChangedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({ parentThreadId: id, childThreadId: id }),
);
export type SubAgentGraphChangedParams = z.infer<typeof SubAgentGraphChangedParamsSchema>;

export const PlanTodoSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    id: z.string().min(1),
    content: z.string(),
    priority: z.enum(["high", "medium", "low"]),
    /** snake_case `in_progress` is how the reference spells it on the wire. */
    status: z.enum(["pending", "in_progress", "completed", "cancelled"]),
  }),
);
export type PlanTodo = z.infer<typeof PlanTodoSchema>;

/** The structured plan of plan mode. It names no thread in the reference, a gap we keep compatible. */
export const PlanUpdatedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    title: z.string(),
    overview: z.string(),
    content: z.string(),
    todos: z.array(PlanTodoSchema),
  }),
);
export type PlanUpdatedParams = z.infer<typeof PlanUpdatedParamsSchema>;

/** The outcome of a scheduled (cron) or heartbeat job. */
export const SystemJobResultParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    source: z.enum(["cron", "heartbeat"]),
    jobId: z.string().optional(),
    jobName: z.string().optional(),
    threadId: z.string().optional(),
    result: z.string().optional(),
    error: z.string().optional(),
    tokenUsage: TokenUsageSchema.optional(),
  }),
);
export type SystemJobResultParams = z.infer<typeof SystemJobResultParamsSchema>;

export const WorkspaceConfigRegionSchema = lazySchema("appserver.notifications", () =>
  z.enum([
    "workspace.model",
    "workspace.apiKey",
    "workspace.endpoint",
    "welcomeSuggestions",
    "skills",
    "plugins",
    "memory",
    "workspace.defaultApprovalPolicy",
    "mcp",
    "externalChannel",
    "subagent",
  ]),
);
export type WorkspaceConfigRegion = z.infer<typeof WorkspaceConfigRegionSchema>;

/** Only to connections that did not opt out with `configChange: false`. */
export const WorkspaceConfigChangedParamsSchema = lazySchema("appserver.notifications", () =>
  z.looseObject({
    /** What made the change (a method name or subsystem). */
    source: z.string(),
    regions: z.array(WorkspaceConfigRegionSchema),
    changedAt: IsoTimestampSchema,
  }),
);
export type WorkspaceConfigChangedParams = z.infer<typeof WorkspaceConfigChangedParamsSchema>;
