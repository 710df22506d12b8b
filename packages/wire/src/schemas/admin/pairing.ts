/**
 * `nexo/admin/pairing/*`: asynchronous device pairing (e.g. WhatsApp QR). `start` returns a
 * challenge; its state then advances pending → qr_ready → awaiting_user → linked | expired |
 * cancelled, pushed as `nexo/notify/pairing_status_changed` and readable with `status`. The push
 * payload and the `status` result are the same shape so one renderer serves both.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { EpochMsSchema, NonEmptyStringSchema } from "./common.js";

export const PAIRING_STATES = [
  "pending",
  "qr_ready",
  "awaiting_user",
  "linked",
  "expired",
  "cancelled",
] as const;
export const PairingStateSchema = lazySchema("admin.pairing", () => z.enum(PAIRING_STATES));
export type PairingState = z.infer<typeof PairingStateSchema>;

/** States after which the challenge never changes again. */
export const TERMINAL_PAIRING_STATES: ReadonlySet<PairingState> = new Set(["linked", "expired", "cancelled"]);

export const PairingStartParamsSchema = lazySchema("admin.pairing", () =>
  z.looseObject({
    /** The agent the credential will serve once linked; binding happens later via credentials/register. */
    agent_id: NonEmptyStringSchema,
    channel: NonEmptyStringSchema,
    instance: z.string().min(1).optional(),
  }),
);
export type PairingStartParams = z.infer<typeof PairingStartParamsSchema>;

export const PairingStartResultSchema = lazySchema("admin.pairing", () =>
  z.looseObject({
    challenge_id: NonEmptyStringSchema,
    expires_at_ms: EpochMsSchema,
    /** Operator-facing instructions the UI shows verbatim. */
    instructions: z.string().optional(),
  }),
);
export type PairingStartResult = z.infer<typeof PairingStartResultSchema>;

/** State-specific detail; only the fields of the current state are set. */
export const PairingStatusDataSchema = lazySchema("admin.pairing", () =>
  z.looseObject({
    /** qr_ready: terminal-friendly rendering of the QR code. */
    qr_ascii: z.string().optional(),
    /** qr_ready: PNG of the QR code, base64. */
    qr_png_base64: z.string().optional(),
    /** linked: the channel's id for the paired device. */
    device_jid: z.string().optional(),
    /** expired / cancelled: why, for the operator. */
    error: z.string().optional(),
  }),
);
export type PairingStatusData = z.infer<typeof PairingStatusDataSchema>;

export const PairingStatusSchema = lazySchema("admin.pairing", () =>
  z.looseObject({
    challenge_id: NonEmptyStringSchema,
    state: PairingStateSchema,
    data: PairingStatusDataSchema.optional(),
    /** Which credential the challenge is for; carried so a listener needs no lookup. */
    channel: z.string().min(1).optional(),
    instance: z.string().min(1).optional(),
  }),
);
export type PairingStatus = z.infer<typeof PairingStatusSchema>;

export const PairingStatusParamsSchema = lazySchema("admin.pairing", () =>
  z.looseObject({ challenge_id: NonEmptyStringSchema }),
);
export type PairingStatusParams = z.infer<typeof PairingStatusParamsSchema>;

export const PairingStatusResultSchema = PairingStatusSchema;
export type PairingStatusResult = PairingStatus;

export const PairingCancelParamsSchema = lazySchema("admin.pairing", () =>
  z.looseObject({ challenge_id: NonEmptyStringSchema }),
);
export type PairingCancelParams = z.infer<typeof PairingCancelParamsSchema>;

/** `cancelled: false` when the challenge was unknown or already terminal (cancel is idempotent). */
export const PairingCancelResultSchema = lazySchema("admin.pairing", () =>
  z.looseObject({ cancelled: z.boolean() }),
);
export type PairingCancelResult = z.infer<typeof PairingCancelResultSchema>;
