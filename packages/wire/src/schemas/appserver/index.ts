/**
 * The AppServer protocol core (JSON-RPC 2.0 over stdio JSONL or WebSocket text frames): handshake,
 * threads, turns, items, approvals, client-executed tools, notifications and errors. The tables
 * below map each wire method name to its schemas so the door, tests and any client validate
 * against one declaration.
 *
 * The management families (models, MCP, sub-agent profiles, …) declare their own method tables in
 * their own files (`modelMethods`, `mcpMethods`, …), each served by the door's family of that name.
 */
import type { z } from "zod";
import { method, notification } from "../jsonrpc.js";
import { ApprovalRequestParamsSchema, ApprovalRequestResultSchema } from "./approvals.js";
import {
  ExtChannelHeartbeatParamsSchema,
  ExtChannelHeartbeatResultSchema,
  ExtChannelSendParamsSchema,
  ExtChannelSendResultSchema,
  ExtChannelToolCallParamsSchema,
} from "./channels.js";
import {
  CommandExecuteParamsSchema,
  CommandExecuteResultSchema,
  CommandListParamsSchema,
  CommandListResultSchema,
} from "./commands.js";
import { ThreadIdParamsSchema } from "./common.js";
import { InitializedParamsSchema, InitializeParamsSchema, InitializeResultSchema } from "./initialize.js";
import { McpStatusUpdatedParamsSchema } from "./mcp.js";
import {
  AgentMessageDeltaParamsSchema,
  ApprovalResolvedParamsSchema,
  CommandExecutionOutputDeltaParamsSchema,
  ItemLifecycleParamsSchema,
  PlanUpdatedParamsSchema,
  ReasoningDeltaParamsSchema,
  SubAgentGraphChangedParamsSchema,
  SubAgentProgressParamsSchema,
  SystemEventParamsSchema,
  SystemJobResultParamsSchema,
  ThreadDeletedParamsSchema,
  ThreadQueueUpdatedParamsSchema,
  ThreadRenamedParamsSchema,
  ThreadResumedParamsSchema,
  ThreadRuntimeChangedParamsSchema,
  ThreadStartedParamsSchema,
  ThreadStatusChangedParamsSchema,
  ToolCallArgumentsDeltaParamsSchema,
  TurnCancelledParamsSchema,
  TurnCompletedParamsSchema,
  TurnFailedParamsSchema,
  TurnStartedParamsSchema,
  UsageDeltaParamsSchema,
  WorkspaceConfigChangedParamsSchema,
} from "./notifications.js";
import {
  ThreadAckResultSchema,
  ThreadConfigUpdateParamsSchema,
  ThreadListParamsSchema,
  ThreadListResultSchema,
  ThreadModeSetParamsSchema,
  ThreadReadParamsSchema,
  ThreadRenameParamsSchema,
  ThreadResultSchema,
  ThreadResumeParamsSchema,
  ThreadRollbackParamsSchema,
  ThreadStartParamsSchema,
  ThreadSubscribeParamsSchema,
} from "./threads.js";
import { ToolCallParamsSchema, ToolCallResultSchema } from "./tools.js";
import {
  TurnEnqueueParamsSchema,
  TurnEnqueueResultSchema,
  TurnInterruptParamsSchema,
  TurnInterruptResultSchema,
  TurnQueueRemoveParamsSchema,
  TurnQueueRemoveResultSchema,
  TurnStartParamsSchema,
  TurnStartResultSchema,
  TurnSteerParamsSchema,
  TurnSteerResultSchema,
} from "./turns.js";
import {
  ChannelListParamsSchema,
  ChannelListResultSchema,
  ChannelStatusParamsSchema,
  ChannelStatusResultSchema,
  CommitMessageSuggestParamsSchema,
  CommitMessageSuggestResultSchema,
  WelcomeSuggestionsParamsSchema,
  WelcomeSuggestionsResultSchema,
} from "./workspace.js";

export * from "./approvals.js";
export * from "./channels.js";
export * from "./commands.js";
export * from "./common.js";
export * from "./errors.js";
export * from "./external-channels.js";
export * from "./hub.js";
export * from "./initialize.js";
export * from "./items.js";
export * from "./mcp.js";
export * from "./models.js";
export * from "./notifications.js";
export * from "./plugins.js";
export * from "./skills.js";
export * from "./subagents.js";
export * from "./threads.js";
export * from "./tools.js";
export * from "./turns.js";
export * from "./workspace.js";
export * from "./workspace-config.js";

/** Client→server requests. */
export const appServerMethods = {
  initialize: method(InitializeParamsSchema, InitializeResultSchema),

  "thread/start": method(ThreadStartParamsSchema, ThreadResultSchema),
  "thread/resume": method(ThreadResumeParamsSchema, ThreadResultSchema),
  "thread/list": method(ThreadListParamsSchema, ThreadListResultSchema),
  "thread/read": method(ThreadReadParamsSchema, ThreadResultSchema),
  "thread/rollback": method(ThreadRollbackParamsSchema, ThreadResultSchema),
  "thread/subscribe": method(ThreadSubscribeParamsSchema, ThreadAckResultSchema),
  "thread/unsubscribe": method(ThreadIdParamsSchema, ThreadAckResultSchema),
  "thread/pause": method(ThreadIdParamsSchema, ThreadAckResultSchema),
  "thread/archive": method(ThreadIdParamsSchema, ThreadAckResultSchema),
  "thread/unarchive": method(ThreadIdParamsSchema, ThreadAckResultSchema),
  "thread/delete": method(ThreadIdParamsSchema, ThreadAckResultSchema),
  "thread/rename": method(ThreadRenameParamsSchema, ThreadAckResultSchema),
  "thread/mode/set": method(ThreadModeSetParamsSchema, ThreadAckResultSchema),
  "thread/config/update": method(ThreadConfigUpdateParamsSchema, ThreadAckResultSchema),

  "turn/start": method(TurnStartParamsSchema, TurnStartResultSchema),
  "turn/interrupt": method(TurnInterruptParamsSchema, TurnInterruptResultSchema),
  "turn/enqueue": method(TurnEnqueueParamsSchema, TurnEnqueueResultSchema),
  "turn/queue/remove": method(TurnQueueRemoveParamsSchema, TurnQueueRemoveResultSchema),
  "turn/steer": method(TurnSteerParamsSchema, TurnSteerResultSchema),

  "command/list": method(CommandListParamsSchema, CommandListResultSchema),
  "command/execute": method(CommandExecuteParamsSchema, CommandExecuteResultSchema),

  "channel/list": method(ChannelListParamsSchema, ChannelListResultSchema),
  "channel/status": method(ChannelStatusParamsSchema, ChannelStatusResultSchema),
  "workspace/commitMessage/suggest": method(
    CommitMessageSuggestParamsSchema,
    CommitMessageSuggestResultSchema,
  ),
  "welcome/suggestions": method(WelcomeSuggestionsParamsSchema, WelcomeSuggestionsResultSchema),
} as const;
export type AppServerMethodName = keyof typeof appServerMethods;

/** Server→client requests: the client must answer each one. */
export const appServerServerRequests = {
  "item/approval/request": method(ApprovalRequestParamsSchema, ApprovalRequestResultSchema),
  "item/tool/call": method(ToolCallParamsSchema, ToolCallResultSchema),
  /** Only to connections that declared `channelAdapter`. */
  "ext/channel/heartbeat": method(ExtChannelHeartbeatParamsSchema, ExtChannelHeartbeatResultSchema),
  "ext/channel/send": method(ExtChannelSendParamsSchema, ExtChannelSendResultSchema),
  "ext/channel/toolCall": method(ExtChannelToolCallParamsSchema, ToolCallResultSchema),
} as const;
export type AppServerServerRequestName = keyof typeof appServerServerRequests;

/** Server→client notifications. */
export const appServerNotifications = {
  "turn/started": notification(TurnStartedParamsSchema),
  "turn/completed": notification(TurnCompletedParamsSchema),
  "turn/failed": notification(TurnFailedParamsSchema),
  "turn/cancelled": notification(TurnCancelledParamsSchema),

  "item/started": notification(ItemLifecycleParamsSchema),
  "item/completed": notification(ItemLifecycleParamsSchema),
  "item/agentMessage/delta": notification(AgentMessageDeltaParamsSchema),
  "item/reasoning/delta": notification(ReasoningDeltaParamsSchema),
  "item/toolCall/argumentsDelta": notification(ToolCallArgumentsDeltaParamsSchema),
  "item/commandExecution/outputDelta": notification(CommandExecutionOutputDeltaParamsSchema),
  "item/approval/resolved": notification(ApprovalResolvedParamsSchema),
  "item/usage/delta": notification(UsageDeltaParamsSchema),

  "subagent/progress": notification(SubAgentProgressParamsSchema),
  "subagent/graphChanged": notification(SubAgentGraphChangedParamsSchema),
  "system/event": notification(SystemEventParamsSchema),
  "system/jobResult": notification(SystemJobResultParamsSchema),
  "plan/updated": notification(PlanUpdatedParamsSchema),

  "thread/started": notification(ThreadStartedParamsSchema),
  "thread/resumed": notification(ThreadResumedParamsSchema),
  "thread/renamed": notification(ThreadRenamedParamsSchema),
  "thread/deleted": notification(ThreadDeletedParamsSchema),
  "thread/statusChanged": notification(ThreadStatusChangedParamsSchema),
  "thread/runtimeChanged": notification(ThreadRuntimeChangedParamsSchema),
  "thread/queue/updated": notification(ThreadQueueUpdatedParamsSchema),

  "workspace/configChanged": notification(WorkspaceConfigChangedParamsSchema),
  "mcp/status/updated": notification(McpStatusUpdatedParamsSchema),
} as const;
export type AppServerNotificationName = keyof typeof appServerNotifications;

/** Client→server notifications. */
export const appServerClientNotifications = {
  initialized: notification(InitializedParamsSchema),
} as const;
export type AppServerClientNotificationName = keyof typeof appServerClientNotifications;

export type AppServerMethodParams<M extends AppServerMethodName> = z.infer<
  (typeof appServerMethods)[M]["params"]
>;
export type AppServerMethodResult<M extends AppServerMethodName> = z.infer<
  (typeof appServerMethods)[M]["result"]
>;
export type AppServerServerRequestParams<M extends AppServerServerRequestName> = z.infer<
  (typeof appServerServerRequests)[M]["params"]
>;
export type AppServerServerRequestResult<M extends AppServerServerRequestName> = z.infer<
  (typeof appServerServerRequests)[M]["result"]
>;
export type AppServerNotificationParams<M extends AppServerNotificationName> = z.infer<
  (typeof appServerNotifications)[M]["params"]
>;
