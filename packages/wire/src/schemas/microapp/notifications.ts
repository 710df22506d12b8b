/**
 * Notifications the daemon sends a microapp. `agents/updated` goes to every microapp; the
 * `nexo/notify/*` ones only to microapps holding the matching capability (their schemas live with
 * the admin RPC, which defines them). The contract defines no microapp → daemon notification.
 */
import { z } from "zod";
import type { AdminCapability } from "../admin/capabilities.js";
import { adminNotifications } from "../admin/notifications.js";
import { type NotificationSchema, notification } from "../jsonrpc.js";
import { lazySchema } from "../lazy.js";

/** agents.yaml was hot-reloaded and changed what this microapp can bind to. */
export const MicroappAgentsUpdatedParamsSchema = lazySchema("microapp.notifications", () =>
  z.looseObject({
    /** The agent ids now visible to this microapp. */
    agent_ids: z.array(z.string().min(1)),
  }),
);
export type MicroappAgentsUpdatedParams = z.infer<typeof MicroappAgentsUpdatedParamsSchema>;

export interface MicroappNotificationSchema<P extends z.ZodType = z.ZodType> extends NotificationSchema<P> {
  /** Grants of which any one makes the microapp receive it; empty: every microapp receives it. */
  capabilities: readonly AdminCapability[];
}

export const microappNotifications = {
  "agents/updated": { ...notification(MicroappAgentsUpdatedParamsSchema), capabilities: [] },
  ...adminNotifications,
} as const satisfies Record<string, MicroappNotificationSchema>;
export type MicroappNotificationName = keyof typeof microappNotifications;
