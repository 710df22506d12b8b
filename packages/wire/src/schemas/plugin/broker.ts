/**
 * The broker bridge (plugin contract §5.1, §5.4): `broker.event` (host → child) and
 * `broker.publish` (child → host), both notifications carrying a broker Event; and nexo's
 * acknowledged publish, `broker.publish_acked` (child → host request, below).
 */
import { z } from "zod";
import { disposableSchema, lazySchema } from "../lazy.js";
import { JsonObjectSchema } from "./common.js";

/**
 * A broker event as it crosses the bridge. The host's events carry `id`, `timestamp` and
 * `session_id`; the scripting SDKs drop those and add `correlation_id` / `metadata` instead
 * (notes §5.8), so only `topic` and `source` are required. A missing payload reads as `{}`, as
 * the TypeScript SDK does.
 */
export const BrokerEventSchema = lazySchema("plugin.broker", () =>
  z.looseObject({
    id: z.string().optional(),
    timestamp: z.string().optional(),
    topic: z.string().min(1),
    source: z.string().min(1),
    session_id: z.string().nullable().optional(),
    correlation_id: z.string().nullable().optional(),
    metadata: JsonObjectSchema.optional(),
    payload: z.unknown().default({}),
  }),
);
export type BrokerEvent = z.infer<typeof BrokerEventSchema>;
export type BrokerEventInput = z.input<typeof BrokerEventSchema>;

/**
 * `broker.event` params. A handler is given `params.topic` (the subscription match), which need
 * not equal `event.topic`.
 */
export const BrokerEventParamsSchema = lazySchema("plugin.broker", () =>
  z.looseObject({
    topic: z.string().min(1),
    event: BrokerEventSchema,
  }),
);
export type BrokerEventParams = z.infer<typeof BrokerEventParamsSchema>;

/** `broker.publish` params. The host checks `topic` against the plugin's allowlist (§6). */
export const BrokerPublishParamsSchema = lazySchema("plugin.broker", () =>
  z.looseObject({
    topic: z.string().min(1),
    event: BrokerEventSchema,
  }),
);
export type BrokerPublishParams = z.infer<typeof BrokerPublishParamsSchema>;

/**
 * nexo's acknowledged publish (an additive extension of the contract, docs/plugins.md):
 * `broker.publish_acked` (child → host request) takes the same params as `broker.publish` and is
 * answered only once the daemon has taken the message — for a `plugin.inbound.*` message, once the
 * router has written it to the durable inbox. A host that serves it says so in `initialize` params,
 * `host_features: ["broker.publish_acked"]`; plugins built with an upstream SDK never look and keep
 * sending the `broker.publish` notification, which stays served as before.
 */
export const HOST_FEATURES = ["broker.publish_acked"] as const;
export const HostFeatureSchema = lazySchema("plugin.broker", () => z.enum(HOST_FEATURES));
export type HostFeature = z.infer<typeof HostFeatureSchema>;

/**
 * The `initialize` params' advertisement. Unknown names are dropped rather than refused, so a
 * plugin talking to a newer nexo still starts; anything that is not an array reads as none.
 */
export function hostFeaturesAdvertSchema() {
  return z
    .unknown()
    .transform((value): HostFeature[] =>
      Array.isArray(value)
        ? value.filter((name): name is HostFeature => (HOST_FEATURES as readonly unknown[]).includes(name))
        : [],
    );
}
/** Read only in the handshake, so built on use and let go, like ./lifecycle.ts's schemas. */
export const HostFeaturesAdvertSchema = disposableSchema(hostFeaturesAdvertSchema);

export const BrokerPublishAckedParamsSchema = BrokerPublishParamsSchema;
export type BrokerPublishAckedParams = BrokerPublishParams;

/** The acknowledgement. */
export const BrokerPublishAckedResultSchema = lazySchema("plugin.broker", () =>
  z.looseObject({
    /** The broker event's id (the host mints one when the plugin sent none). */
    event_id: z.string().min(1),
    /**
     * True when the message is in the durable inbox: a daemon killed from now on answers it after
     * its restart. False when it is queued in memory only (the inbox write failed, or the daemon
     * runs without one).
     */
    durable: z.boolean(),
    /** The inbox already held this message (same channel message id): no second turn runs. */
    duplicate: z.boolean(),
  }),
);
export type BrokerPublishAckedResult = z.infer<typeof BrokerPublishAckedResultSchema>;

/** Why an acknowledged publish was refused: `error.data.reason` of codes -32013…-32016, -32012, -32602. */
export const PUBLISH_REFUSALS = [
  "topic_not_allowed",
  "invalid_message",
  "not_routed",
  "queue_full",
  "inbox_full",
  "not_acknowledged",
] as const;
export const PublishRefusalSchema = lazySchema("plugin.broker", () => z.enum(PUBLISH_REFUSALS));
export type PublishRefusal = z.infer<typeof PublishRefusalSchema>;

/** `error.data` of a refused acknowledged publish. */
export const PublishRefusedDataSchema = lazySchema("plugin.broker", () =>
  z.looseObject({
    reason: PublishRefusalSchema,
    /** Present when retrying later may succeed (inbox or queue full, not acknowledged). */
    retry_after_secs: z.number().int().nonnegative().optional(),
  }),
);
export type PublishRefusedData = z.infer<typeof PublishRefusedDataSchema>;
