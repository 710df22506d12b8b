/**
 * Approvals: the server asks the client with a JSON-RPC *request* (`item/approval/request`) and the
 * client's response carries the decision. The same request goes to every connection watching the
 * thread; the first answer wins and later ones are ignored.
 */
import { z } from "zod";
import { lazySchema } from "../lazy.js";

/** What kind of operation needs consent; also the `kind` of a client tool's approval descriptor. */
export const ApprovalTypeSchema = lazySchema("appserver.approvals", () =>
  z.enum(["shell", "file", "remoteResource"]),
);
export type ApprovalType = z.infer<typeof ApprovalTypeSchema>;

/**
 * `acceptForSession` remembers the request's `scopeKey` for the session, `acceptAlways` persists it,
 * `cancel` declines and cancels the whole turn. A reply that does not parse counts as `decline`.
 */
export const ApprovalDecisionSchema = lazySchema("appserver.approvals", () =>
  z.enum(["accept", "acceptForSession", "acceptAlways", "decline", "cancel"]),
);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

export const ApprovalRequestParamsSchema = lazySchema("appserver.approvals", () =>
  z.looseObject({
    threadId: z.string().min(1),
    turnId: z.string().min(1),
    /** The `approvalRequest` item announced just before this request. */
    itemId: z.string().min(1),
    requestId: z.string().min(1),
    approvalType: ApprovalTypeSchema,
    /** The command line for shell approvals, the file operation for file approvals. */
    operation: z.string(),
    target: z.string(),
    /** `shell:*`, `file:<operation>` or `<kind>:<operation>:<target>`; what `acceptForSession` covers. */
    scopeKey: z.string(),
    reason: z.string(),
  }),
);
export type ApprovalRequestParams = z.infer<typeof ApprovalRequestParamsSchema>;

export const ApprovalRequestResultSchema = lazySchema("appserver.approvals", () =>
  z.looseObject({ decision: ApprovalDecisionSchema }),
);
export type ApprovalRequestResult = z.infer<typeof ApprovalRequestResultSchema>;
