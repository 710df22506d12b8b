/**
 * Channel-specific `payload` / `metadata` shapes of `credentials/register` for the bundled
 * persisters (admin-rpc spec, "Channel credential persisters"). The persister's synchronous shape
 * check maps a mismatch to -32602, so the same rules live here and fail before any write.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { NonEmptyStringSchema } from "./common.js";

/** Stable probe outcome codes; new ones are only ever added. */
export const CREDENTIAL_REASON_CODES = [
  "ok",
  "unsupported_channel",
  "invalid_payload",
  "invalid_metadata",
  "connectivity_failed",
  "auth_failed",
  "tls_failed",
  "not_probed",
] as const;
export const CredentialReasonCodeSchema = lazySchema("admin.credential-persisters", () =>
  z.enum(CREDENTIAL_REASON_CODES),
);
export type CredentialReasonCode = z.infer<typeof CredentialReasonCodeSchema>;

const PortSchema = lazySchema("admin.credential-persisters", () => z.number().int().min(1).max(65535));

/** One mail server endpoint; `tls` names the handshake mode (`implicit_tls`, `starttls`). */
export const MailServerSchema = lazySchema("admin.credential-persisters", () =>
  z.looseObject({
    host: NonEmptyStringSchema,
    port: PortSchema,
    tls: NonEmptyStringSchema,
  }),
);
export type MailServer = z.infer<typeof MailServerSchema>;

/** Email payload: the address plus exactly one secret, a password or an XOAUTH2 token. */
export const EmailCredentialPayloadSchema = lazySchema("admin.credential-persisters", () =>
  z
    .looseObject({
      address: NonEmptyStringSchema,
      password: NonEmptyStringSchema.optional(),
      xoauth2_token: NonEmptyStringSchema.optional(),
    })
    .superRefine((payload, ctx) => {
      const secrets = [payload.password, payload.xoauth2_token].filter((s) => s !== undefined).length;
      if (secrets !== 1) {
        ctx.addIssue({
          code: "custom",
          path: [payload.password === undefined ? "password" : "xoauth2_token"],
          message: "email payload needs exactly one of password or xoauth2_token",
          params: { reason_code: "invalid_payload" },
        });
      }
    }),
);
export type EmailCredentialPayload = z.infer<typeof EmailCredentialPayloadSchema>;

export const EmailCredentialMetadataSchema = lazySchema("admin.credential-persisters", () =>
  z.looseObject({
    imap: MailServerSchema,
    smtp: MailServerSchema,
    provider: NonEmptyStringSchema.optional(),
  }),
);
export type EmailCredentialMetadata = z.infer<typeof EmailCredentialMetadataSchema>;

/** Telegram metadata; every field is optional and defaulted by the persister. */
export const TelegramCredentialMetadataSchema = lazySchema("admin.credential-persisters", () =>
  z.looseObject({
    polling: z
      .looseObject({
        enabled: z.boolean().optional(),
        interval_ms: z.number().int().positive().optional(),
      })
      .optional(),
    allow_agents: z.array(NonEmptyStringSchema).optional(),
    allowed_chat_ids: z.array(z.number().int()).optional(),
  }),
);
export type TelegramCredentialMetadata = z.infer<typeof TelegramCredentialMetadataSchema>;

/**
 * The shapes a bundled persister checks, by channel. Channels without an entry (WhatsApp, whose
 * pairing flow owns its state, and any third-party channel) carry opaque payloads.
 */
export const credentialPersisterShapes: Readonly<
  Record<string, { payload?: z.ZodType; metadata?: z.ZodType }>
> = {
  email: { payload: EmailCredentialPayloadSchema, metadata: EmailCredentialMetadataSchema },
  telegram: { metadata: TelegramCredentialMetadataSchema },
};
