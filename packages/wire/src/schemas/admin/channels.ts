/**
 * `nexo/admin/channels/*`: the MCP-channel servers an agent may receive through
 * (`agents.yaml.<id>.channels.approved`). Distinct from credentials/*, which manage native channel
 * accounts. `doctor` is static (yaml only); the live probe stays in the CLI.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, NonEmptyStringSchema } from "./common.js";

export const ChannelsListParamsSchema = lazySchema("admin.channels", () =>
  z.looseObject({ agent_id: z.string().min(1).optional() }).optional(),
);
export type ChannelsListParams = z.infer<typeof ChannelsListParamsSchema>;

/** An approval; `allowlist` restricts it to some of the agent's binding indices (absent: all). */
export const ChannelEntrySchema = lazySchema("admin.channels", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    server_name: NonEmptyStringSchema,
    allowlist: z.array(CountSchema).optional(),
  }),
);
export type ChannelEntry = z.infer<typeof ChannelEntrySchema>;

export const ChannelsListResultSchema = lazySchema("admin.channels", () =>
  z.looseObject({ entries: z.array(ChannelEntrySchema) }),
);
export type ChannelsListResult = z.infer<typeof ChannelsListResultSchema>;

/** Idempotent: approving an approved server returns the existing entry. */
export const ChannelsApproveParamsSchema = ChannelEntrySchema;
export type ChannelsApproveParams = ChannelEntry;

export const ChannelsApproveResultSchema = ChannelEntrySchema;
export type ChannelsApproveResult = ChannelEntry;

export const ChannelsRevokeParamsSchema = lazySchema("admin.channels", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    server_name: NonEmptyStringSchema,
  }),
);
export type ChannelsRevokeParams = z.infer<typeof ChannelsRevokeParamsSchema>;

export const ChannelsRevokeResultSchema = lazySchema("admin.channels", () =>
  z.looseObject({ removed: z.boolean() }),
);
export type ChannelsRevokeResult = z.infer<typeof ChannelsRevokeResultSchema>;

export const ChannelsDoctorParamsSchema = lazySchema("admin.channels", () =>
  z
    .looseObject({
      agent_id: z.string().min(1).optional(),
      binding_index: CountSchema.optional(),
    })
    .optional(),
);
export type ChannelsDoctorParams = z.infer<typeof ChannelsDoctorParamsSchema>;

export const ChannelDoctorVerdictSchema = lazySchema("admin.channels", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    server_name: NonEmptyStringSchema,
    status: z.enum(["ok", "warning", "error"]),
    message: z.string(),
  }),
);
export type ChannelDoctorVerdict = z.infer<typeof ChannelDoctorVerdictSchema>;

export const ChannelsDoctorResultSchema = lazySchema("admin.channels", () =>
  z.looseObject({ verdicts: z.array(ChannelDoctorVerdictSchema) }),
);
export type ChannelsDoctorResult = z.infer<typeof ChannelsDoctorResultSchema>;
