/**
 * External channels (`externalChannelManagement`): the channel adapters this server accepts. A
 * `websocket` channel is one whose adapter connects by itself and declares `channelAdapter` with
 * that name at `initialize`; a `subprocess` channel is one the server starts (command, args,
 * working directory, environment) and talks to over the process's stdio. An adapter whose
 * channel is not listed, or not enabled, is refused with `system/event {kind: "channelRejected"}`.
 */
import { z } from "zod";
import { method } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { EmptyObjectSchema } from "./common.js";

export const ExternalChannelTransportSchema = lazySchema("appserver.external-channels", () =>
  z.enum(["subprocess", "websocket"]),
);
export type ExternalChannelTransport = z.infer<typeof ExternalChannelTransportSchema>;

/** Nulls are what clients send for the fields of the other transport; they mean "absent". */
export const ExternalChannelConfigSchema = lazySchema("appserver.external-channels", () =>
  z.looseObject({
    name: z.string(),
    enabled: z.boolean().optional(),
    transport: z.string().optional(),
    command: z.string().nullable().optional(),
    args: z.array(z.string()).nullable().optional(),
    workingDirectory: z.string().nullable().optional(),
    env: z.record(z.string(), z.string()).nullable().optional(),
  }),
);
export type ExternalChannelConfig = z.infer<typeof ExternalChannelConfigSchema>;

/** A channel as the server answers it: `enabled` and `transport` always there. */
export const ExternalChannelSchema = lazySchema("appserver.external-channels", () =>
  ExternalChannelConfigSchema.extend({
    name: z.string().min(1),
    enabled: z.boolean(),
    transport: ExternalChannelTransportSchema,
  }),
);
export type ExternalChannel = z.infer<typeof ExternalChannelSchema>;

export const ExternalChannelNameParamsSchema = lazySchema("appserver.external-channels", () =>
  z.looseObject({ name: z.string() }),
);
export const ExternalChannelUpsertParamsSchema = lazySchema("appserver.external-channels", () =>
  z.looseObject({ channel: ExternalChannelConfigSchema }),
);
export const ExternalChannelListResultSchema = lazySchema("appserver.external-channels", () =>
  z.looseObject({ channels: z.array(ExternalChannelSchema) }),
);
export const ExternalChannelResultSchema = lazySchema("appserver.external-channels", () =>
  z.looseObject({ channel: ExternalChannelSchema }),
);
export const ExternalChannelRemoveResultSchema = lazySchema("appserver.external-channels", () =>
  z.looseObject({ removed: z.boolean() }),
);

export const externalChannelMethods = {
  "externalChannel/list": method(EmptyObjectSchema, ExternalChannelListResultSchema),
  "externalChannel/get": method(ExternalChannelNameParamsSchema, ExternalChannelResultSchema),
  "externalChannel/upsert": method(ExternalChannelUpsertParamsSchema, ExternalChannelResultSchema),
  "externalChannel/remove": method(ExternalChannelNameParamsSchema, ExternalChannelRemoveResultSchema),
} as const;
