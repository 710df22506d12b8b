/**
 * The external channel adapter extension: server→client requests to a connection that declared
 * `capabilities.channelAdapter` at `initialize` (a bot bridge speaking for one channel).
 * `ext/channel/heartbeat` checks the adapter still answers, `ext/channel/send` delivers a message
 * through it, `ext/channel/toolCall` runs one of the tools it declared.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema } from "./common.js";

export const ChannelMediaSourceSchema = lazySchema("appserver.channels", () =>
  z.looseObject({
    kind: z.enum(["hostPath", "url", "dataBase64", "artifactId"]),
    hostPath: z.string().optional(),
    url: z.string().optional(),
    dataBase64: z.string().optional(),
    artifactId: z.string().optional(),
  }),
);

export const ChannelOutboundMessageSchema = lazySchema("appserver.channels", () =>
  z.looseObject({
    kind: z.enum(["text", "file", "audio", "image", "video"]),
    text: z.string().optional(),
    caption: z.string().optional(),
    fileName: z.string().optional(),
    mediaType: z.string().optional(),
    source: ChannelMediaSourceSchema.optional(),
  }),
);
export type ChannelOutboundMessage = z.infer<typeof ChannelOutboundMessageSchema>;

export const ExtChannelSendParamsSchema = lazySchema("appserver.channels", () =>
  z.looseObject({
    /** The platform's own delivery target (a chat or user id). */
    target: z.string(),
    message: ChannelOutboundMessageSchema,
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
);
export type ExtChannelSendParams = z.infer<typeof ExtChannelSendParamsSchema>;

export const ExtChannelSendResultSchema = lazySchema("appserver.channels", () =>
  z.looseObject({
    delivered: z.boolean(),
    remoteMessageId: z.string().nullable().optional(),
    remoteMediaId: z.string().nullable().optional(),
    /** A stable code when not delivered (`UnsupportedDeliveryKind`, `AdapterDeliveryFailed`, …). */
    errorCode: z.string().nullable().optional(),
    errorMessage: z.string().nullable().optional(),
  }),
);
export type ExtChannelSendResult = z.infer<typeof ExtChannelSendResultSchema>;

export const ExtChannelToolCallParamsSchema = lazySchema("appserver.channels", () =>
  z.looseObject({
    threadId: z.string().min(1),
    turnId: z.string().min(1),
    callId: z.string().min(1),
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()),
    context: z.looseObject({
      channelName: z.string(),
      channelContext: z.string().nullable().optional(),
      senderId: z.string().nullable().optional(),
      groupId: z.string().nullable().optional(),
    }),
  }),
);
export type ExtChannelToolCallParams = z.infer<typeof ExtChannelToolCallParamsSchema>;

export const ExtChannelHeartbeatParamsSchema = EmptyObjectSchema;
export const ExtChannelHeartbeatResultSchema = lazySchema("appserver.channels", () => z.looseObject({}));
