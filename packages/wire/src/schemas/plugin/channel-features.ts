/**
 * nexo's optional channel features: methods a channel plugin MAY implement beyond §5.x, for the
 * operator surface (the admin RPC's pairing, bots and credentials methods). They are an additive
 * extension of the contract, in the same style as every minor version so far:
 *
 * - a plugin that implements them says so in its `initialize` reply, `channel_features: ["pairing",
 *   "bots", "credentials"]` (any subset); a plugin that does not (every plugin written with an
 *   upstream SDK) is never sent them, and nexo answers the operator "channel_unavailable";
 * - within an advertised feature a method answered -32601 is a method the plugin chose to leave
 *   out (e.g. `channel.credentials.persist`), which nexo treats as that step not applying.
 *
 * Every request carries `kind` (and `instance`, null without one), like §5.x, so one plugin serving
 * several kinds dispatches with one handler.
 *
 * The pairing states and their data, and the probe's outcome, are the admin RPC's own shapes
 * (../admin/pairing.ts, ../admin/credentials.ts): the host relays them to the operator as they are.
 *
 * Reply streaming (`reply_stream`): while an agent writes its reply to a person on the channel, the
 * host sends the plugin each piece as a `channel.reply.delta` notification (host → child), so a
 * channel that can show a reply growing (a web chat) does; the whole reply still arrives as
 * `channel.send_outbound` afterwards and is the one that counts (the pieces are a preview: they
 * are not retried, and a plugin that missed some loses nothing). A host without the feature sends
 * only the whole reply.
 *
 * Pairing: the host asks `channel.pairing.start`; the plugin answers at once and then reports
 * progress with `channel.pairing.update` notifications (child → host), one per state change, until
 * a terminal state. The host may stop a challenge early with `channel.pairing.cancel`.
 */
import { z } from "zod";
import { CredentialValidationSchema } from "../admin/credentials.js";
import { PairingStateSchema, PairingStatusDataSchema } from "../admin/pairing.js";
import { disposableSchema, lazySchema } from "../lazy.js";
import { JsonObjectSchema, OkResultSchema } from "./common.js";

export const CHANNEL_FEATURES = ["pairing", "bots", "credentials", "reply_stream"] as const;
export const ChannelFeatureSchema = lazySchema("plugin.channel-features", () => z.enum(CHANNEL_FEATURES));
export type ChannelFeature = z.infer<typeof ChannelFeatureSchema>;

/**
 * The `initialize` reply's advertisement. Unknown names are dropped rather than refused, so a
 * plugin built for a newer nexo still loads here.
 */
export function channelFeaturesAdvertSchema() {
  return z
    .array(z.string())
    .transform((names) =>
      names.filter((name): name is ChannelFeature => (CHANNEL_FEATURES as readonly string[]).includes(name)),
    );
}
/** Read only in the handshake, so built on use and let go, like ./lifecycle.ts's schemas. */
export const ChannelFeaturesAdvertSchema = disposableSchema(channelFeaturesAdvertSchema);

/** The members naming the channel a request is for, spread into each request's shape. */
const ChannelTarget = {
  kind: lazySchema("plugin.channel-features", () => z.string().min(1)),
  /** The channel instance (a named account); null or absent for the kind's only one. */
  instance: lazySchema("plugin.channel-features", () => z.string().min(1).nullable().optional()),
};

// --- pairing ---------------------------------------------------------------------------------

export const ChannelPairingStartParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    ...ChannelTarget,
    /** The host's id for this challenge; every update names it. */
    challenge_id: z.string().min(1),
    /** The agent the linked account will serve (informational for the plugin). */
    agent_id: z.string().min(1),
    /** When the host gives up on the challenge (epoch ms); the plugin may expire it sooner. */
    expires_at_ms: z.number().int().nonnegative(),
    /**
     * Link by phone number (a pairing code) instead of a QR code: the admin call's `phone_number`,
     * already checked to be E.164 (digits, optional leading `+`). Personal data: the plugin keeps
     * it out of its logs. A plugin that predates the field ignores it and pairs its usual way.
     */
    phone_number: z.string().min(1).optional(),
  }),
);
export type ChannelPairingStartParams = z.infer<typeof ChannelPairingStartParamsSchema>;

export const ChannelPairingStartResultSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    /** The plugin's own deadline when it is earlier than the host's (a QR code's lifetime). */
    expires_at_ms: z.number().int().nonnegative().optional(),
    /** What the operator should do, shown verbatim. */
    instructions: z.string().optional(),
  }),
);
export type ChannelPairingStartResult = z.infer<typeof ChannelPairingStartResultSchema>;

export const ChannelPairingCancelParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    kind: z.string().min(1),
    challenge_id: z.string().min(1),
  }),
);
export type ChannelPairingCancelParams = z.infer<typeof ChannelPairingCancelParamsSchema>;

/** `{ok: true}` also for a challenge the plugin no longer knows (cancel is idempotent). */
export const ChannelPairingCancelResultSchema = OkResultSchema;

/** `channel.pairing.update` (child → host notification): one state change of one challenge. */
export const ChannelPairingUpdateParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    challenge_id: z.string().min(1),
    state: PairingStateSchema,
    data: PairingStatusDataSchema.optional(),
  }),
);
export type ChannelPairingUpdateParams = z.infer<typeof ChannelPairingUpdateParamsSchema>;

// --- reply streaming -------------------------------------------------------------------------

/** `channel.reply.delta` (host → child notification): a piece of the reply being written to `to`. */
export const ChannelReplyDeltaParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    ...ChannelTarget,
    /** The recipient, as `channel.send_outbound`'s `to` will name it. */
    to: z.string().min(1),
    /** The agent's turn writing the reply: pieces with the same id make one reply, in order. */
    turn_id: z.string().min(1),
    text: z.string(),
  }),
);
export type ChannelReplyDeltaParams = z.infer<typeof ChannelReplyDeltaParamsSchema>;

// --- bots ------------------------------------------------------------------------------------

export const ChannelBotsListParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    ...ChannelTarget,
    agent_id: z.string().min(1),
  }),
);
export type ChannelBotsListParams = z.infer<typeof ChannelBotsListParamsSchema>;

export const ChannelBotSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    jid: z.string().min(1),
    persona_id: z.string(),
  }),
);
export type ChannelBot = z.infer<typeof ChannelBotSchema>;

export const ChannelBotsListResultSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({ bots: z.array(ChannelBotSchema) }),
);
export type ChannelBotsListResult = z.infer<typeof ChannelBotsListResultSchema>;

export const ChannelBotsSendParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    ...ChannelTarget,
    agent_id: z.string().min(1),
    bot_jid: z.string().min(1),
    text: z.string().min(1),
  }),
);
export type ChannelBotsSendParams = z.infer<typeof ChannelBotsSendParamsSchema>;

export const ChannelBotsSendResultSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({ message_id: z.string().min(1) }),
);
export type ChannelBotsSendResult = z.infer<typeof ChannelBotsSendResultSchema>;

// --- credentials (the persister) ----------------------------------------------------------------

/** What every persister method receives: the credential as `credentials/register` got it. */
export const ChannelCredentialsParamsSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    ...ChannelTarget,
    payload: z.unknown(),
    metadata: JsonObjectSchema,
  }),
);
export type ChannelCredentialsParams = z.infer<typeof ChannelCredentialsParamsSchema>;

/**
 * `channel.credentials.validate`: the synchronous, network-free shape check. A refusal names which
 * half is wrong; nothing is written then.
 */
export const ChannelCredentialsValidateResultSchema = lazySchema("plugin.channel-features", () =>
  z.looseObject({
    valid: z.boolean(),
    reason_code: z.enum(["invalid_payload", "invalid_metadata"]).optional(),
    detail: z.string().optional(),
  }),
);
export type ChannelCredentialsValidateResult = z.infer<typeof ChannelCredentialsValidateResultSchema>;

/** `channel.credentials.persist`: the channel's own runtime state written. */
export const ChannelCredentialsPersistResultSchema = OkResultSchema;

/**
 * `channel.credentials.probe`: the best-effort connectivity check — exactly the `validation` block
 * `credentials/register` answers with (`{probed, healthy, detail?, reason_code?}`).
 */
export const ChannelCredentialsProbeResultSchema = CredentialValidationSchema;
export type ChannelCredentialsProbeResult = z.infer<typeof ChannelCredentialsProbeResultSchema>;
