/**
 * `nexo/admin/auth/rotate_token`: rotate the operator bearer token (and the cookie HMAC derived
 * from it). Listeners learn of it through `nexo/notify/token_rotated`.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { EpochMsSchema, OperatorTokenHashSchema } from "./common.js";

/** A shorter bearer token is too guessable to accept. */
export const AUTH_TOKEN_MIN_LEN = 16;
export const AUTH_REASON_MAX_LEN = 200;

export const AuthRotateTokenParamsSchema = lazySchema("admin.auth", () =>
  z
    .looseObject({
      /** Absent: the daemon generates a random token. */
      new_token: z
        .string()
        .min(AUTH_TOKEN_MIN_LEN, { message: `new_token must be at least ${AUTH_TOKEN_MIN_LEN} chars` })
        .optional(),
      /** Audit hint ("scheduled rotation", "key leaked"). */
      reason: z
        .string()
        .max(AUTH_REASON_MAX_LEN, { message: `reason must be at most ${AUTH_REASON_MAX_LEN} chars` })
        .optional(),
    })
    .optional(),
);
export type AuthRotateTokenParams = z.infer<typeof AuthRotateTokenParamsSchema>;

export const AuthRotateTokenResultSchema = lazySchema("admin.auth", () =>
  z.looseObject({
    ok: z.boolean(),
    /** Hash of the new token, for display; the token itself is never echoed. */
    new_hash: OperatorTokenHashSchema,
    at_ms: EpochMsSchema,
  }),
);
export type AuthRotateTokenResult = z.infer<typeof AuthRotateTokenResultSchema>;
