/**
 * `nexo/admin/microapp_audit/tail`: the admin call audit log. Every dispatched call leaves one
 * row whatever its outcome; `args_hash` lets operators spot repeated identical calls without the
 * log holding the (possibly personal) params.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, EpochMsSchema, NonEmptyStringSchema, TenantIdSchema } from "./common.js";

export const AdminAuditResultSchema = lazySchema("admin.audit", () => z.enum(["ok", "error", "denied"]));
export type AdminAuditResult = z.infer<typeof AdminAuditResultSchema>;

export const AdminAuditRowSchema = lazySchema("admin.audit", () =>
  z.looseObject({
    microapp_id: NonEmptyStringSchema,
    method: NonEmptyStringSchema,
    /** The capability that gated the call (the missing one when denied). */
    capability: z.string(),
    /** SHA-256 of the canonicalised, secret-redacted params. */
    args_hash: z.string(),
    started_at_ms: EpochMsSchema,
    result: AdminAuditResultSchema,
    error_code: z.number().int().nullable().optional(),
    duration_ms: CountSchema,
    /** From `params.tenant_id` when the call had one. */
    tenant_id: z.string().nullable().optional(),
  }),
);
export type AdminAuditRow = z.infer<typeof AdminAuditRowSchema>;

export const MicroappAuditTailParamsSchema = lazySchema("admin.audit", () =>
  z
    .looseObject({
      microapp_id: z.string().min(1).optional(),
      method: z.string().min(1).optional(),
      result: AdminAuditResultSchema.optional(),
      tenant_id: TenantIdSchema.optional(),
      since_ms: EpochMsSchema.optional(),
      limit: CountSchema.optional(),
      offset: CountSchema.optional(),
    })
    .optional(),
);
export type MicroappAuditTailParams = z.infer<typeof MicroappAuditTailParamsSchema>;

/** Newest first; page on with `offset = next_offset` while `has_more`. */
export const MicroappAuditTailResultSchema = lazySchema("admin.audit", () =>
  z.looseObject({
    entries: z.array(AdminAuditRowSchema),
    total: CountSchema,
    has_more: z.boolean(),
    next_offset: CountSchema.optional(),
  }),
);
export type MicroappAuditTailResult = z.infer<typeof MicroappAuditTailResultSchema>;
