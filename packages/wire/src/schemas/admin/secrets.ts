/**
 * `nexo/admin/secrets/write`: store a secret (an API key, a channel token) in the microapp's
 * secret store and expose it to the daemon under the same name, without a restart. Only the name
 * ever reaches the audit log.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/**
 * Secret names double as file names and env var names, so they use the conventional env var
 * alphabet; that also rules out path traversal.
 */
export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{1,63}$/;

export const SecretsWriteParamsSchema = lazySchema("admin.secrets", () =>
  z.looseObject({
    name: z.string().regex(SECRET_NAME_PATTERN, {
      message: "secret names are 2-64 chars of A-Z, 0-9 and '_', starting with a letter",
    }),
    value: z.string().min(1, { message: "value must not be empty" }),
  }),
);
export type SecretsWriteParams = z.infer<typeof SecretsWriteParamsSchema>;

export const SecretsWriteResultSchema = lazySchema("admin.secrets", () =>
  z.looseObject({
    /** Where the secret was written. */
    path: z.string(),
    /** True when a value of that name was already set and got replaced. */
    overwrote_env: z.boolean(),
  }),
);
export type SecretsWriteResult = z.infer<typeof SecretsWriteResultSchema>;
