/**
 * Notifications the daemon pushes to microapps (no id, never answered). Holding the listed
 * capability is the subscription: there is no subscribe call.
 */
import { z } from "zod";
import { type NotificationSchema, notification } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";
import { AgentEventSchema } from "./agent-events.js";
import type { AdminCapability } from "./capabilities.js";
import {
  EpochMsSchema,
  NonEmptyStringSchema,
  OperatorTokenHashSchema,
  TranscriptRoleSchema,
} from "./common.js";
import { PairingStatusSchema } from "./pairing.js";

/** A transcript line appended (the pre-firehose form; agent_event carries the same and more). */
export const TranscriptAppendedNotificationSchema = lazySchema("admin.notifications", () =>
  z.looseObject({
    session_id: NonEmptyStringSchema,
    role: TranscriptRoleSchema,
    /** Already redacted. */
    body: z.string(),
    ts_ms: EpochMsSchema,
  }),
);
export type TranscriptAppendedNotification = z.infer<typeof TranscriptAppendedNotificationSchema>;

/**
 * The operator token changed. A listener swaps to `new` only when `old_hash` is the hash of the
 * token it holds, so a late notification reaching an already-restarted microapp is ignored.
 */
export const TokenRotatedNotificationSchema = lazySchema("admin.notifications", () =>
  z.looseObject({
    old_hash: OperatorTokenHashSchema,
    new: NonEmptyStringSchema,
  }),
);
export type TokenRotatedNotification = z.infer<typeof TokenRotatedNotificationSchema>;

export const PairingStatusChangedNotificationSchema = PairingStatusSchema;
export type PairingStatusChangedNotification = z.infer<typeof PairingStatusChangedNotificationSchema>;

export const AgentEventNotificationSchema = AgentEventSchema;

/**
 * The microapp fell behind the firehose and `dropped` frames were never sent to it. For each
 * stream it missed (at most 100), `agent_events/read {agent_id, session_id, since_seq}` returns
 * every event from the first one lost, with the seqs the live frames would have had.
 */
export const AgentEventsLaggedNotificationSchema = lazySchema("admin.notifications", () =>
  z.looseObject({
    dropped: z.number().int().positive(),
    streams: z.array(
      z.looseObject({
        agent_id: NonEmptyStringSchema,
        session_id: NonEmptyStringSchema,
        since_seq: z.number().int().nonnegative(),
      }),
    ),
  }),
);
export type AgentEventsLaggedNotification = z.infer<typeof AgentEventsLaggedNotificationSchema>;
export type AgentEventNotification = z.infer<typeof AgentEventNotificationSchema>;

export interface AdminNotificationSchema<P extends z.ZodType = z.ZodType> extends NotificationSchema<P> {
  /** The grant(s) that make a microapp receive it; any one of them suffices. */
  capabilities: readonly AdminCapability[];
}

function pushed<P extends z.ZodType>(
  params: P,
  capabilities: readonly AdminCapability[],
): AdminNotificationSchema<P> {
  return { ...notification(params), capabilities };
}

export const adminNotifications = {
  "nexo/notify/transcript_appended": pushed(TranscriptAppendedNotificationSchema, ["transcripts_subscribe"]),
  "nexo/notify/pairing_status_changed": pushed(PairingStatusChangedNotificationSchema, ["pairing_initiate"]),
  "nexo/notify/token_rotated": pushed(TokenRotatedNotificationSchema, ["credentials_crud"]),
  /**
   * transcripts_subscribe receives transcript_appended events; agent_events_subscribe_all
   * receives every kind.
   */
  "nexo/notify/agent_event": pushed(AgentEventNotificationSchema, [
    "transcripts_subscribe",
    "agent_events_subscribe_all",
  ]),
  "nexo/notify/agent_events_lagged": pushed(AgentEventsLaggedNotificationSchema, [
    "transcripts_subscribe",
    "agent_events_subscribe_all",
  ]),
} as const;
export type AdminNotificationName = keyof typeof adminNotifications;
