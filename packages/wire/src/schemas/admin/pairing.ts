/**
 * `nexo/admin/pairing/*`: asynchronous device pairing (e.g. WhatsApp QR). `start` returns a
 * challenge; its state then advances pending → qr_ready → awaiting_user → linked | expired |
 * cancelled, pushed as `nexo/notify/pairing_status_changed` and readable with `status`. The push
 * payload and the `status` result are the same shape so one renderer serves both.
 *
 * Linking by phone number (WhatsApp's "Link with phone number"): `start` with `phone_number`
 * skips the QR codes; the challenge goes pending → awaiting_user with `data.pairing_code`, the
 * code the person types on the phone, then → awaiting_user without it once the phone took the
 * code, and ends like a QR pairing. No new state: a client that knows only the QR flow still
 * reads a sensible "waiting for the user".
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

/** E.164: a country code and subscriber number, at most 15 digits, never starting with 0. */
export const PAIRING_PHONE_NUMBER_PATTERN = /^\+?[1-9][0-9]{6,14}$/;
export const PairingPhoneNumberSchema = lazySchema("admin.pairing", () =>
  z.string().regex(PAIRING_PHONE_NUMBER_PATTERN, {
    message:
      "phone_number must be the international number with its country code, digits only (E.164, e.g. +447700900123): no spaces, dashes or leading 0",
  }),
);

export const PairingStartParamsSchema = lazySchema("admin.pairing", () =>
  z.looseObject({
    /** The agent the credential will serve once linked; binding happens later via credentials/register. */
    agent_id: NonEmptyStringSchema,
    channel: NonEmptyStringSchema,
    instance: z.string().min(1).optional(),
    /**
     * Link by phone number instead of a QR code: the account's number in international form,
     * digits only with the country code (E.164), an optional leading `+`. Personal data: blanked
     * in the audit log, never stored by the daemon.
     */
    phone_number: PairingPhoneNumberSchema.optional(),
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
    /**
     * awaiting_user, when linking by phone number: the code to type on the phone (WhatsApp:
     * 8 characters, shown as `ABCD-EFGH`). Absent once the phone took it.
     */
    pairing_code: z.string().optional(),
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
