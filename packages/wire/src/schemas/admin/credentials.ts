/**
 * `nexo/admin/credentials/*`: channel credentials, many-to-many with agents. One `(channel,
 * instance)` credential can serve N agents; `register` appends `{plugin: channel, instance}` to
 * each listed agent's bindings, `revoke` removes it from every agent and deletes the credential.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { JsonRecordSchema, NonEmptyStringSchema } from "./common.js";
import { CredentialReasonCodeSchema, credentialPersisterShapes } from "./credential-persisters.js";

export const CredentialsListParamsSchema = lazySchema("admin.credentials", () =>
  z.looseObject({ channel_filter: z.string().min(1).optional() }).optional(),
);
export type CredentialsListParams = z.infer<typeof CredentialsListParamsSchema>;

/** A stored credential and the agents bound to it (empty list: an orphan the operator should fix). */
export const CredentialSummarySchema = lazySchema("admin.credentials", () =>
  z.looseObject({
    channel: NonEmptyStringSchema,
    instance: z.string().min(1).optional(),
    agent_ids: z.array(NonEmptyStringSchema),
  }),
);
export type CredentialSummary = z.infer<typeof CredentialSummarySchema>;

export const CredentialsListResultSchema = lazySchema("admin.credentials", () =>
  z.looseObject({ credentials: z.array(CredentialSummarySchema) }),
);
export type CredentialsListResult = z.infer<typeof CredentialsListResultSchema>;

/**
 * `payload` is the secret blob written to the credential store; `metadata` is the structured hint
 * the channel's persister consumes. For channels with a bundled persister both are checked against
 * that persister's shape, reported under `payload.*` / `metadata.*`.
 */
export const CredentialsRegisterParamsSchema = lazySchema("admin.credentials", () =>
  z
    .looseObject({
      channel: NonEmptyStringSchema,
      instance: z.string().min(1).optional(),
      /** Agents to bind; empty stores the credential without binding it. */
      agent_ids: z.array(NonEmptyStringSchema),
      payload: z.unknown(),
      metadata: JsonRecordSchema.optional(),
    })
    .superRefine((params, ctx) => {
      const shapes = credentialPersisterShapes[params.channel];
      if (!shapes) return;
      for (const field of ["payload", "metadata"] as const) {
        const schema = shapes[field];
        if (!schema) continue;
        const checked = schema.safeParse(params[field] ?? {});
        if (checked.success) continue;
        for (const issue of checked.error.issues) {
          ctx.addIssue({
            code: "custom",
            path: [field, ...issue.path],
            message: `${params.channel} ${field}: ${issue.message}`,
            params: { reason_code: field === "payload" ? "invalid_payload" : "invalid_metadata" },
          });
        }
      }
    }),
);
export type CredentialsRegisterParams = z.infer<typeof CredentialsRegisterParamsSchema>;

/** The persister's best-effort connectivity probe; a failed probe never aborts the register. */
export const CredentialValidationSchema = lazySchema("admin.credentials", () =>
  z.looseObject({
    probed: z.boolean(),
    healthy: z.boolean(),
    detail: z.string().optional(),
    reason_code: CredentialReasonCodeSchema.optional(),
  }),
);
export type CredentialValidation = z.infer<typeof CredentialValidationSchema>;

/** `validation` is null when the channel has no persister (opaque blob only). */
export const CredentialsRegisterResultSchema = lazySchema("admin.credentials", () =>
  z.looseObject({
    summary: CredentialSummarySchema,
    validation: CredentialValidationSchema.nullable().optional(),
  }),
);
export type CredentialsRegisterResult = z.infer<typeof CredentialsRegisterResultSchema>;

export const CredentialsRevokeParamsSchema = lazySchema("admin.credentials", () =>
  z.looseObject({
    channel: NonEmptyStringSchema,
    instance: z.string().min(1).optional(),
  }),
);
export type CredentialsRevokeParams = z.infer<typeof CredentialsRevokeParamsSchema>;

/** `removed: false` means the credential was already gone; `unbound_agents` lists edited agents. */
export const CredentialsRevokeResultSchema = lazySchema("admin.credentials", () =>
  z.looseObject({
    removed: z.boolean(),
    unbound_agents: z.array(NonEmptyStringSchema),
  }),
);
export type CredentialsRevokeResult = z.infer<typeof CredentialsRevokeResultSchema>;
