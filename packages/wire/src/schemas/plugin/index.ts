/**
 * The plugin contract (contract_version 1.10.0): every message schema, the manifest schema, and
 * the method tables hosts and SDKs dispatch and validate against.
 */
import type { z } from "zod";
import { method, notification } from "../jsonrpc.js";
import {
  BrokerEventParamsSchema,
  BrokerPublishAckedParamsSchema,
  BrokerPublishAckedResultSchema,
  BrokerPublishParamsSchema,
} from "./broker.js";
import {
  ChannelSendOutboundParamsSchema,
  ChannelSendOutboundResultSchema,
  ChannelStartParamsSchema,
  ChannelStartResultSchema,
  ChannelStopParamsSchema,
  ChannelStopResultSchema,
} from "./channel.js";
import {
  ChannelBotsListParamsSchema,
  ChannelBotsListResultSchema,
  ChannelBotsSendParamsSchema,
  ChannelBotsSendResultSchema,
  ChannelCredentialsParamsSchema,
  ChannelCredentialsPersistResultSchema,
  ChannelCredentialsProbeResultSchema,
  ChannelCredentialsValidateResultSchema,
  ChannelPairingCancelParamsSchema,
  ChannelPairingCancelResultSchema,
  ChannelPairingStartParamsSchema,
  ChannelPairingStartResultSchema,
  ChannelPairingUpdateParamsSchema,
  ChannelReplyDeltaParamsSchema,
} from "./channel-features.js";
import { HookOnHookParamsSchema, HookOnHookResultSchema } from "./hook.js";
import {
  InitializeParamsSchema,
  InitializeResultSchema,
  ShutdownParamsSchema,
  ShutdownResultSchema,
} from "./lifecycle.js";
import { LlmChatDeltaParamsSchema, LlmChatParamsSchema, LlmChatResultSchema } from "./llm.js";
import {
  VectorDeleteParamsSchema,
  VectorDeleteResultSchema,
  VectorSearchParamsSchema,
  VectorSearchResultSchema,
  VectorUpsertParamsSchema,
  VectorUpsertResultSchema,
} from "./memory.js";
import {
  LlmCompleteDeltaParamsSchema,
  LlmCompleteParamsSchema,
  LlmCompleteResultSchema,
  MemoryRecallParamsSchema,
  MemoryRecallResultSchema,
} from "./services.js";
import { isPlainToolInvokeParams, ToolInvokeParamsSchema, ToolInvokeResultSchema } from "./tool.js";

export * from "./broker.js";
export * from "./channel.js";
export * from "./channel-features.js";
export * from "./common.js";
export * from "./error-data.js";
export * from "./hook.js";
export * from "./lifecycle.js";
export * from "./llm.js";
export * from "./manifest.js";
export * from "./memory.js";
export * from "./sandbox-paths.js";
export * from "./services.js";
export * from "./tool.js";

/** The contract version these schemas implement. */
export const PLUGIN_CONTRACT_VERSION = "1.10.0";

/** Requests the host sends and the plugin answers. */
export const pluginMethods = {
  initialize: method(InitializeParamsSchema, InitializeResultSchema),
  shutdown: method(ShutdownParamsSchema, ShutdownResultSchema),
  "channel.start": method(ChannelStartParamsSchema, ChannelStartResultSchema),
  "channel.stop": method(ChannelStopParamsSchema, ChannelStopResultSchema),
  "channel.send_outbound": method(ChannelSendOutboundParamsSchema, ChannelSendOutboundResultSchema),
  "llm.chat": method(LlmChatParamsSchema, LlmChatResultSchema),
  "hook.on_hook": method(HookOnHookParamsSchema, HookOnHookResultSchema),
  "memory.vector_upsert": method(VectorUpsertParamsSchema, VectorUpsertResultSchema),
  "memory.vector_search": method(VectorSearchParamsSchema, VectorSearchResultSchema),
  "memory.vector_delete": method(VectorDeleteParamsSchema, VectorDeleteResultSchema),
  "tool.invoke": method(ToolInvokeParamsSchema, ToolInvokeResultSchema, isPlainToolInvokeParams),
  // nexo's optional channel features (./channel-features.ts), sent only to plugins advertising them.
  "channel.pairing.start": method(ChannelPairingStartParamsSchema, ChannelPairingStartResultSchema),
  "channel.pairing.cancel": method(ChannelPairingCancelParamsSchema, ChannelPairingCancelResultSchema),
  "channel.bots.list": method(ChannelBotsListParamsSchema, ChannelBotsListResultSchema),
  "channel.bots.send": method(ChannelBotsSendParamsSchema, ChannelBotsSendResultSchema),
  "channel.credentials.validate": method(
    ChannelCredentialsParamsSchema,
    ChannelCredentialsValidateResultSchema,
  ),
  "channel.credentials.persist": method(
    ChannelCredentialsParamsSchema,
    ChannelCredentialsPersistResultSchema,
  ),
  "channel.credentials.probe": method(ChannelCredentialsParamsSchema, ChannelCredentialsProbeResultSchema),
} as const;
export type PluginMethodName = keyof typeof pluginMethods;

/** Requests the plugin sends and the host answers. */
export const pluginChildMethods = {
  "memory.recall": method(MemoryRecallParamsSchema, MemoryRecallResultSchema),
  "llm.complete": method(LlmCompleteParamsSchema, LlmCompleteResultSchema),
  // nexo's acknowledged publish (./broker.ts), sent only to hosts advertising it.
  "broker.publish_acked": method(BrokerPublishAckedParamsSchema, BrokerPublishAckedResultSchema),
} as const;
export type PluginChildMethodName = keyof typeof pluginChildMethods;

/**
 * Notifications in both directions. `broker.event`, `llm.complete.delta` and `channel.reply.delta`
 * go host → child;
 * `broker.publish`, `llm.chat.delta` and `channel.pairing.update` go child → host.
 */
export const pluginNotifications = {
  "broker.event": notification(BrokerEventParamsSchema),
  "broker.publish": notification(BrokerPublishParamsSchema),
  "llm.complete.delta": notification(LlmCompleteDeltaParamsSchema),
  "llm.chat.delta": notification(LlmChatDeltaParamsSchema),
  "channel.pairing.update": notification(ChannelPairingUpdateParamsSchema),
  // nexo's reply_stream channel feature (./channel-features.ts), sent only to plugins advertising it.
  "channel.reply.delta": notification(ChannelReplyDeltaParamsSchema),
} as const;
export type PluginNotificationName = keyof typeof pluginNotifications;

export type PluginMethodParams<M extends PluginMethodName> = z.infer<(typeof pluginMethods)[M]["params"]>;
export type PluginMethodResult<M extends PluginMethodName> = z.infer<(typeof pluginMethods)[M]["result"]>;
export type PluginChildMethodParams<M extends PluginChildMethodName> = z.infer<
  (typeof pluginChildMethods)[M]["params"]
>;
export type PluginChildMethodResult<M extends PluginChildMethodName> = z.infer<
  (typeof pluginChildMethods)[M]["result"]
>;
export type PluginNotificationParams<M extends PluginNotificationName> = z.infer<
  (typeof pluginNotifications)[M]["params"]
>;
