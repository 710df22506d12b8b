/**
 * `nexo/admin/escalations/*`: work items agents flagged for a human. `list` (escalations_read)
 * serves dashboards; `resolve` (escalations_resolve, the stronger grant) settles one. Pausing a
 * scope with a pending escalation resolves it as an operator takeover.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import {
  CountSchema,
  EpochMsSchema,
  JsonRecordSchema,
  NonEmptyStringSchema,
  OperatorTokenHashSchema,
  TenantIdSchema,
} from "./common.js";
import { ProcessingScopeSchema } from "./processing-shapes.js";

export const ESCALATION_REASONS = [
  "out_of_scope",
  "missing_data",
  "needs_human_judgment",
  "complaint",
  "error",
  "ambiguity",
  "policy_violation",
  "other",
] as const;
export const EscalationReasonSchema = lazySchema("admin.escalations", () => z.enum(ESCALATION_REASONS));
export type EscalationReason = z.infer<typeof EscalationReasonSchema>;

export const EscalationUrgencySchema = lazySchema("admin.escalations", () =>
  z.enum(["low", "normal", "high"]),
);
export type EscalationUrgency = z.infer<typeof EscalationUrgencySchema>;

/** How a pending escalation was settled. */
export const ResolvedBySchema = lazySchema("admin.escalations", () =>
  z.discriminatedUnion("kind", [
    z.looseObject({ kind: z.literal("operator_takeover") }),
    z.looseObject({ kind: z.literal("operator_dismissed"), reason: z.string() }),
    z.looseObject({ kind: z.literal("agent_resolved") }),
  ]),
);
export type ResolvedBy = z.infer<typeof ResolvedBySchema>;

export const EscalationStateSchema = lazySchema("admin.escalations", () =>
  z.discriminatedUnion("state", [
    z.looseObject({ state: z.literal("none") }),
    z.looseObject({
      state: z.literal("pending"),
      scope: ProcessingScopeSchema,
      summary: z.string(),
      reason: EscalationReasonSchema,
      urgency: EscalationUrgencySchema,
      /** Free-form per agent shape (chat: the question; batch: the job id; …). */
      context: JsonRecordSchema.optional(),
      requested_at_ms: EpochMsSchema,
    }),
    z.looseObject({
      state: z.literal("resolved"),
      scope: ProcessingScopeSchema,
      resolved_at_ms: EpochMsSchema,
      by: ResolvedBySchema,
    }),
  ]),
);
export type EscalationState = z.infer<typeof EscalationStateSchema>;

/** Default and ceiling of `escalations/list` `limit`; the daemon clamps larger values. */
export const ESCALATIONS_LIST_DEFAULT_LIMIT = 100;
export const ESCALATIONS_LIST_MAX_LIMIT = 1000;

export const EscalationsListParamsSchema = lazySchema("admin.escalations", () =>
  z
    .looseObject({
      filter: z.enum(["pending", "resolved", "all"]).default("pending"),
      agent_id: z.string().min(1).optional(),
      /** A ProcessingScope `kind` (e.g. `conversation`). */
      scope_kind: z.string().min(1).optional(),
      limit: CountSchema.optional(),
      /** Cross-tenant queries come back empty rather than revealing that entries exist. */
      tenant_id: TenantIdSchema.optional(),
    })
    .optional(),
);
export type EscalationsListParams = z.infer<typeof EscalationsListParamsSchema>;

export const EscalationEntrySchema = lazySchema("admin.escalations", () =>
  z.looseObject({
    agent_id: NonEmptyStringSchema,
    scope: ProcessingScopeSchema,
    state: EscalationStateSchema,
  }),
);
export type EscalationEntry = z.infer<typeof EscalationEntrySchema>;

/** Newest first (by requested_at_ms for pending, resolved_at_ms for resolved). */
export const EscalationsListResultSchema = lazySchema("admin.escalations", () =>
  z.looseObject({ entries: z.array(EscalationEntrySchema) }),
);
export type EscalationsListResult = z.infer<typeof EscalationsListResultSchema>;

export const EscalationsResolveParamsSchema = lazySchema("admin.escalations", () =>
  z
    .looseObject({
      scope: ProcessingScopeSchema,
      by: z.enum(["dismissed", "takeover"]),
      dismiss_reason: z.string().optional(),
      operator_token_hash: OperatorTokenHashSchema,
    })
    .superRefine((params, ctx) => {
      if (params.by === "dismissed" && !params.dismiss_reason?.trim()) {
        ctx.addIssue({
          code: "custom",
          path: ["dismiss_reason"],
          message: 'by = "dismissed" requires a dismiss_reason',
        });
      }
    }),
);
export type EscalationsResolveParams = z.infer<typeof EscalationsResolveParamsSchema>;

/** `changed: false` when nothing was pending on the scope. */
export const EscalationsResolveResultSchema = lazySchema("admin.escalations", () =>
  z.looseObject({
    changed: z.boolean(),
    correlation_id: NonEmptyStringSchema,
  }),
);
export type EscalationsResolveResult = z.infer<typeof EscalationsResolveResultSchema>;
