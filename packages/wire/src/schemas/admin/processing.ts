/**
 * `nexo/admin/processing/*`: pause an agent on a scope, act in its place, resume. All four methods
 * need `operator_intervention`; the mutating three carry the operator's token hash, which the SDK
 * stamps itself (see OPERATOR_STAMPED_METHODS).
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";
import { CountSchema, NonEmptyStringSchema, OperatorTokenHashSchema } from "./common.js";
import {
  InterventionActionSchema,
  ProcessingControlStateSchema,
  ProcessingScopeSchema,
} from "./processing-shapes.js";

/**
 * The longest operator summary accepted on resume: the FTS index's document cap, so a stamped
 * summary always indexes.
 */
export const PROCESSING_SUMMARY_MAX_LEN = 4096;

/** Reason codes of a rejected resume; all are -32602 invalid_params, raised before the state flips. */
export const ProcessingResumeRejection = {
  sessionIdRequiredWithSummary: "session_id_required_with_summary",
  emptySummary: "empty_summary",
  summaryTooLong: "summary_too_long",
} as const;

export const ProcessingPauseParamsSchema = lazySchema("admin.processing", () =>
  z.looseObject({
    scope: ProcessingScopeSchema,
    reason: z.string().optional(),
    operator_token_hash: OperatorTokenHashSchema,
  }),
);
export type ProcessingPauseParams = z.infer<typeof ProcessingPauseParamsSchema>;

export const ProcessingResumeParamsSchema = lazySchema("admin.processing", () =>
  z
    .looseObject({
      scope: ProcessingScopeSchema,
      operator_token_hash: OperatorTokenHashSchema,
      /** The transcript that receives the summary; required with `summary_for_agent`. */
      session_id: NonEmptyStringSchema.optional(),
      /** Free text the agent reads as a system entry (`[operator_summary] …`) on its next turn. */
      summary_for_agent: z.string().optional(),
    })
    .superRefine((params, ctx) => {
      const summary = params.summary_for_agent;
      if (summary === undefined) return;
      if (params.session_id === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["session_id"],
          message: `${ProcessingResumeRejection.sessionIdRequiredWithSummary}: summary_for_agent needs the session_id to stamp it on`,
          params: { reason: ProcessingResumeRejection.sessionIdRequiredWithSummary },
        });
      }
      if (summary.trim().length === 0) {
        ctx.addIssue({
          code: "custom",
          path: ["summary_for_agent"],
          message: `${ProcessingResumeRejection.emptySummary}: summary_for_agent is blank`,
          params: { reason: ProcessingResumeRejection.emptySummary },
        });
      } else if (summary.length > PROCESSING_SUMMARY_MAX_LEN) {
        ctx.addIssue({
          code: "custom",
          path: ["summary_for_agent"],
          message: `${ProcessingResumeRejection.summaryTooLong}: summary_for_agent has ${summary.length} chars, the limit is ${PROCESSING_SUMMARY_MAX_LEN}`,
          params: { reason: ProcessingResumeRejection.summaryTooLong },
        });
      }
    }),
);
export type ProcessingResumeParams = z.infer<typeof ProcessingResumeParamsSchema>;

/** Rejected with -32004 not_paused when the scope is not paused, so two humans never both answer. */
export const ProcessingInterventionParamsSchema = lazySchema("admin.processing", () =>
  z.looseObject({
    scope: ProcessingScopeSchema,
    action: InterventionActionSchema,
    operator_token_hash: OperatorTokenHashSchema,
    /** When set, a reply is also stamped on this transcript so the agent sees it after resume. */
    session_id: NonEmptyStringSchema.optional(),
  }),
);
export type ProcessingInterventionParams = z.infer<typeof ProcessingInterventionParamsSchema>;

/** The answer to pause, resume and intervention. */
export const ProcessingAckSchema = lazySchema("admin.processing", () =>
  z.looseObject({
    /** False when the call changed nothing (pausing a paused scope, resuming an active one). */
    changed: z.boolean(),
    correlation_id: NonEmptyStringSchema,
    /**
     * true: the reply or summary is on the transcript. false: it is not (no session_id, no
     * appender, or the append failed) and the agent will resume unaware. Absent: not applicable.
     */
    transcript_stamped: z.boolean().optional(),
    /** Resume only: how many inbounds buffered during the pause were replayed; absent when none. */
    drained_pending: CountSchema.optional(),
  }),
);
export type ProcessingAck = z.infer<typeof ProcessingAckSchema>;

export const ProcessingStateParamsSchema = lazySchema("admin.processing", () =>
  z.looseObject({ scope: ProcessingScopeSchema }),
);
export type ProcessingStateParams = z.infer<typeof ProcessingStateParamsSchema>;

export const ProcessingStateResultSchema = lazySchema("admin.processing", () =>
  z.looseObject({ state: ProcessingControlStateSchema }),
);
export type ProcessingStateResult = z.infer<typeof ProcessingStateResultSchema>;
