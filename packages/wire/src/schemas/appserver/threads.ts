/**
 * Threads: resumable conversations owned by an identity (channel, user, workspace). The `thread/*`
 * methods create, find, read, subscribe to and manage them; their side effects arrive as the
 * `thread/*` notifications in notifications.ts.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import {
  ContextUsageSchema,
  EmptyObjectSchema,
  IsoTimestampSchema,
  SessionIdentitySchema,
  ThreadIdParamsSchema,
} from "./common.js";
import { DynamicToolSpecSchema } from "./tools.js";
import { QueuedTurnInputSchema, TurnSchema } from "./turns.js";

export const ThreadStatusSchema = lazySchema("appserver.threads", () =>
  z.enum(["active", "paused", "archived"]),
);
export type ThreadStatus = z.infer<typeof ThreadStatusSchema>;

/** `server`: the server keeps the model history; `client`: every `turn/start` carries it. */
export const HistoryModeSchema = lazySchema("appserver.threads", () => z.enum(["server", "client"]));
export type HistoryMode = z.infer<typeof HistoryModeSchema>;

/** `plan` restricts the agent to planning tools; `agent` is the default. */
export const ThreadModeSchema = lazySchema("appserver.threads", () => z.enum(["agent", "plan"]));
export type ThreadMode = z.infer<typeof ThreadModeSchema>;

/** What happens to approvals nobody answers: ask (then decline), accept, or cancel the turn. */
export const ApprovalPolicySchema = lazySchema("appserver.threads", () =>
  z.enum(["default", "autoApprove", "interrupt"]),
);
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

/**
 * Per-thread overrides. MCP server and custom tool entries are validated by their own management
 * families, so they stay open objects here; the reference's undocumented extras pass through.
 */
export const ThreadConfigurationSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    mcpServers: z.array(z.looseObject({})).optional(),
    mode: ThreadModeSchema.optional(),
    extensions: z.array(z.string()).optional(),
    customTools: z.array(z.looseObject({})).optional(),
    model: z.string().optional(),
    workspaceOverride: z.string().optional(),
    toolProfile: z.string().optional(),
    useToolProfileOnly: z.boolean().optional(),
    agentInstructions: z.string().optional(),
    approvalPolicy: ApprovalPolicySchema.optional(),
    automationTaskDirectory: z.string().optional(),
    requireApprovalOutsideWorkspace: z.boolean().optional(),
    toolAllowList: z.array(z.string()).optional(),
    toolDenyList: z.array(z.string()).optional(),
  }),
);
export type ThreadConfiguration = z.infer<typeof ThreadConfigurationSchema>;

/** Where a sub-agent thread hangs in its spawn tree. */
export const SubAgentOriginSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    parentThreadId: z.string().min(1),
    parentTurnId: z.string().optional(),
    spawnCallId: z.string().optional(),
    rootThreadId: z.string().optional(),
    depth: z.number().int().nonnegative().optional(),
    agentNickname: z.string().optional(),
    agentRole: z.string().optional(),
    profileName: z.string().optional(),
    runtimeType: z.string().optional(),
    supportsSendInput: z.boolean().optional(),
    supportsResume: z.boolean().optional(),
    supportsClose: z.boolean().optional(),
  }),
);
export type SubAgentOrigin = z.infer<typeof SubAgentOriginSchema>;

export const ThreadSourceSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    kind: z.enum(["user", "subagent"]),
    subAgent: SubAgentOriginSchema.optional(),
  }),
);
export type ThreadSource = z.infer<typeof ThreadSourceSchema>;

/** Live flags; clients must ignore flags they do not know, hence a loose object. */
export const ThreadRuntimeSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    running: z.boolean(),
    waitingOnApproval: z.boolean(),
    waitingOnPlanConfirmation: z.boolean(),
  }),
);
export type ThreadRuntime = z.infer<typeof ThreadRuntimeSchema>;

/**
 * A thread as `thread/start`, `thread/resume` and `thread/read` return it. Only the fields the
 * spec's own example carries are required; we send the timestamps, mode, runtime and queue too.
 */
export const ThreadSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    /** `thread_{yyyyMMdd}_{6 chars}` in the reference. */
    id: z.string().min(1),
    workspacePath: z.string(),
    userId: z.string().optional(),
    originChannel: z.string().min(1),
    channelContext: z.string().optional(),
    displayName: z.string().optional(),
    status: ThreadStatusSchema,
    source: ThreadSourceSchema.optional(),
    createdAt: IsoTimestampSchema.optional(),
    lastActiveAt: IsoTimestampSchema.optional(),
    historyMode: HistoryModeSchema.optional(),
    configuration: ThreadConfigurationSchema.optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    runtime: ThreadRuntimeSchema.optional(),
    queuedInputs: z.array(QueuedTurnInputSchema).optional(),
    /** Only when turn history was asked for. */
    turns: z.array(TurnSchema).optional(),
    contextUsage: ContextUsageSchema.optional(),
  }),
);
export type Thread = z.infer<typeof ThreadSchema>;

/** A row of `thread/list`, ordered by `lastActiveAt`, newest first. */
export const ThreadSummarySchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    id: z.string().min(1),
    userId: z.string().optional(),
    workspacePath: z.string(),
    originChannel: z.string().min(1),
    channelContext: z.string().optional(),
    displayName: z.string().optional(),
    source: ThreadSourceSchema.optional(),
    status: ThreadStatusSchema,
    createdAt: IsoTimestampSchema,
    lastActiveAt: IsoTimestampSchema,
    turnCount: z.number().int().nonnegative(),
    runtime: ThreadRuntimeSchema.optional(),
    metadata: z.record(z.string(), z.string()).optional(),
  }),
);
export type ThreadSummary = z.infer<typeof ThreadSummarySchema>;

/** `{thread}`: the result of start, resume, read and rollback. */
export const ThreadResultSchema = lazySchema("appserver.threads", () =>
  z.looseObject({ thread: ThreadSchema }),
);
export type ThreadResult = z.infer<typeof ThreadResultSchema>;

// --- methods --------------------------------------------------------------------------------------

export const ThreadStartParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    identity: SessionIdentitySchema,
    config: ThreadConfigurationSchema.optional(),
    /** Tools this connection executes itself, via `item/tool/call`. */
    dynamicTools: z.array(DynamicToolSpecSchema).optional(),
    historyMode: HistoryModeSchema.optional(),
    displayName: z.string().optional(),
  }),
);
export type ThreadStartParams = z.infer<typeof ThreadStartParamsSchema>;

export const ThreadResumeParamsSchema = ThreadIdParamsSchema;
export type ThreadResumeParams = z.infer<typeof ThreadResumeParamsSchema>;

/**
 * Matches on workspace, user and channel context; `crossChannelOrigins` adds every thread from
 * those origin channels regardless of user and context.
 */
export const ThreadListParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    identity: SessionIdentitySchema,
    includeArchived: z.boolean().optional(),
    includeSubAgents: z.boolean().optional(),
    crossChannelOrigins: z.array(z.string()).nullable().optional(),
    channelName: z.string().optional(),
  }),
);
export type ThreadListParams = z.infer<typeof ThreadListParamsSchema>;

export const ThreadListResultSchema = lazySchema("appserver.threads", () =>
  z.looseObject({ data: z.array(ThreadSummarySchema) }),
);
export type ThreadListResult = z.infer<typeof ThreadListResultSchema>;

/** Read-only: does not load the agent. */
export const ThreadReadParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    threadId: z.string().min(1),
    includeTurns: z.boolean().optional(),
  }),
);
export type ThreadReadParams = z.infer<typeof ThreadReadParamsSchema>;

/** Drops the last `numTurns` turns from the history; files on disk are not reverted. */
export const ThreadRollbackParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    threadId: z.string().min(1),
    numTurns: z.number().int().min(1),
  }),
);
export type ThreadRollbackParams = z.infer<typeof ThreadRollbackParamsSchema>;

/** Idempotent; `replayRecent` replays the thread's last 32 events to this connection. */
export const ThreadSubscribeParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    threadId: z.string().min(1),
    replayRecent: z.boolean().optional(),
  }),
);
export type ThreadSubscribeParams = z.infer<typeof ThreadSubscribeParamsSchema>;

export const ThreadRenameParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    threadId: z.string().min(1),
    displayName: z.string().min(1),
  }),
);
export type ThreadRenameParams = z.infer<typeof ThreadRenameParamsSchema>;

export const ThreadModeSetParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    threadId: z.string().min(1),
    mode: ThreadModeSchema,
  }),
);
export type ThreadModeSetParams = z.infer<typeof ThreadModeSetParamsSchema>;

export const ThreadConfigUpdateParamsSchema = lazySchema("appserver.threads", () =>
  z.looseObject({
    threadId: z.string().min(1),
    config: ThreadConfigurationSchema,
  }),
);
export type ThreadConfigUpdateParams = z.infer<typeof ThreadConfigUpdateParamsSchema>;

/** Result of the thread methods that only acknowledge (subscribe, pause, delete, rename...). */
export const ThreadAckResultSchema = EmptyObjectSchema;
export type ThreadAckResult = z.infer<typeof ThreadAckResultSchema>;
