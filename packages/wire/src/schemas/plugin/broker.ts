/**
 * The broker bridge (plugin contract §5.1, §5.4): `broker.event` (host → child) and
 * `broker.publish` (child → host), both notifications carrying a broker Event.
 */
import { z } from "zod";
import { JsonObjectSchema } from "./common.js";

/**
 * A broker event as it crosses the bridge. The host's events carry `id`, `timestamp` and
 * `session_id`; the scripting SDKs drop those and add `correlation_id` / `metadata` instead
 * (notes §5.8), so only `topic` and `source` are required. A missing payload reads as `{}`, as
 * the TypeScript SDK does.
 */
export const BrokerEventSchema = z.looseObject({
  id: z.string().optional(),
  timestamp: z.string().optional(),
  topic: z.string().min(1),
  source: z.string().min(1),
  session_id: z.string().nullable().optional(),
  correlation_id: z.string().nullable().optional(),
  metadata: JsonObjectSchema.optional(),
  payload: z.unknown().default({}),
});
export type BrokerEvent = z.infer<typeof BrokerEventSchema>;
export type BrokerEventInput = z.input<typeof BrokerEventSchema>;

/**
 * `broker.event` params. A handler is given `params.topic` (the subscription match), which need
 * not equal `event.topic`.
 */
export const BrokerEventParamsSchema = z.looseObject({
  topic: z.string().min(1),
  event: BrokerEventSchema,
});
export type BrokerEventParams = z.infer<typeof BrokerEventParamsSchema>;

/** `broker.publish` params. The host checks `topic` against the plugin's allowlist (§6). */
export const BrokerPublishParamsSchema = z.looseObject({
  topic: z.string().min(1),
  event: BrokerEventSchema,
});
export type BrokerPublishParams = z.infer<typeof BrokerPublishParamsSchema>;
