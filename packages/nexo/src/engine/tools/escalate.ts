/**
 * `escalate`: the agent asks for a human. It records an escalation on the conversation it is in
 * (listed to operators, who dismiss it or take the conversation over) and tells the agent what
 * happened, so it can tell the person a human will follow up. The recording itself is the
 * daemon's (injected here), which knows the conversation behind the session.
 */
import * as admin from "@nexo/wire/schemas/admin";
import { isoTime } from "../../iso-time.js";
import type { Tool, ToolContext } from "../types.js";
import { oneLine, stringArg } from "./tool-output.js";

export const ESCALATE_TOOL = "escalate";
export const DEFAULT_ESCALATION_REASON: admin.EscalationReason = "needs_human_judgment";
export const DEFAULT_ESCALATION_URGENCY: admin.EscalationUrgency = "normal";

export interface EscalationArgs {
  summary: string;
  reason: admin.EscalationReason;
  urgency: admin.EscalationUrgency;
  context?: Record<string, unknown>;
}

/** Records the escalation of the session's conversation; `created` false when one was pending already. */
export type RaiseEscalation = (
  ctx: Pick<ToolContext, "sessionId" | "agentId">,
  args: EscalationArgs,
) => { created: boolean; requestedAtMs: number };

export function createEscalateTool(raise: RaiseEscalation): Tool {
  return {
    name: ESCALATE_TOOL,
    description:
      "Hand this conversation to a human operator when you cannot or should not go on alone: the " +
      "request is out of scope, data is missing, a judgment needs a person, a complaint, an error. " +
      "Operators see the summary and either take over or dismiss it. Tell the person a human will follow up.",
    inputSchema: {
      type: "object",
      properties: {
        summary: {
          type: "string",
          minLength: 1,
          maxLength: 4096,
          description: "What the operator needs to know: the situation and what is asked",
        },
        reason: {
          type: "string",
          enum: [...admin.ESCALATION_REASONS],
          description: `Why a human is needed (default ${DEFAULT_ESCALATION_REASON})`,
        },
        urgency: {
          type: "string",
          enum: ["low", "normal", "high"],
          description: `How soon (default ${DEFAULT_ESCALATION_URGENCY})`,
        },
        context: {
          type: "object",
          description: "Details for the operator as key/value pairs (e.g. an order id)",
        },
      },
      required: ["summary"],
      additionalProperties: false,
    },
    category: "info",
    source: "builtin",
    // Asking for a human must never itself wait on a human (an approval nobody on a channel can give).
    approvalExempt: true,
    describe: (args) => `Escalate to a human: ${oneLine(stringArg(args, "summary") ?? "", 60)}`,
    async execute(rawArgs, ctx) {
      const args = rawArgs as Partial<EscalationArgs> & { summary: string };
      const { created, requestedAtMs } = raise(ctx, {
        summary: args.summary,
        reason: args.reason ?? DEFAULT_ESCALATION_REASON,
        urgency: args.urgency ?? DEFAULT_ESCALATION_URGENCY,
        ...(args.context === undefined ? {} : { context: args.context }),
      });
      const since = isoTime(requestedAtMs);
      return created
        ? { output: "Escalated: an operator has been notified and will follow up.", metadata: { created } }
        : {
            output: `An escalation of this conversation is already pending (since ${since}); an operator will follow up.`,
            metadata: { created },
          };
    },
  };
}
