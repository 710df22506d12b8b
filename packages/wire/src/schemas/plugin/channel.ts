/**
 * Channel adapter methods (plugin contract §5.x): `channel.start`, `channel.stop` and
 * `channel.send_outbound`, host → child requests for plugins declaring `[plugin.extends].channels`.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { OkResultSchema } from "./common.js";

/** `channel.start` params; `instance` is null (or absent) without per-instance multiplexing. */
export const ChannelStartParamsSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    kind: z.string().min(1),
    instance: z.string().nullable().optional(),
  }),
);
export type ChannelStartParams = z.infer<typeof ChannelStartParamsSchema>;

export const ChannelStartResultSchema = OkResultSchema;
export type ChannelStartResult = z.infer<typeof ChannelStartResultSchema>;

export const ChannelStopParamsSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    kind: z.string().min(1),
  }),
);
export type ChannelStopParams = z.infer<typeof ChannelStopParamsSchema>;

export const ChannelStopResultSchema = OkResultSchema;
export type ChannelStopResult = z.infer<typeof ChannelStopResultSchema>;

export const OutboundTextMessageSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    kind: z.literal("text"),
    to: z.string(),
    body: z.string(),
  }),
);

/**
 * The contract points at a definition of `OutboundMessage` it does not contain; the media shape
 * (`to`, `url`, optional `caption`) is the reference host's.
 */
export const OutboundMediaMessageSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    kind: z.literal("media"),
    to: z.string(),
    url: z.string(),
    caption: z.string().optional(),
  }),
);

/** The adapter-specific escape hatch: any members, interpreted by the plugin. */
export const OutboundCustomMessageSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    kind: z.literal("custom"),
  }),
);

/** `msg.kind` is one of `text`, `media`, `custom` (§5.x). */
export const OutboundMessageSchema = lazySchema("plugin.channel", () =>
  z.discriminatedUnion("kind", [
    OutboundTextMessageSchema,
    OutboundMediaMessageSchema,
    OutboundCustomMessageSchema,
  ]),
);
export type OutboundMessage = z.infer<typeof OutboundMessageSchema>;

export const ChannelSendOutboundParamsSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    kind: z.string().min(1),
    msg: OutboundMessageSchema,
  }),
);
export type ChannelSendOutboundParams = z.infer<typeof ChannelSendOutboundParamsSchema>;

/** The delivery acknowledgement: the channel's message id and the send time in Unix seconds. */
export const ChannelSendOutboundResultSchema = lazySchema("plugin.channel", () =>
  z.looseObject({
    message_id: z.string(),
    sent_at_unix: z.number().int(),
  }),
);
export type ChannelSendOutboundResult = z.infer<typeof ChannelSendOutboundResultSchema>;
