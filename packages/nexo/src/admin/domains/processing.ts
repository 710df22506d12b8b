/**
 * `nexo/admin/processing/*` (operator_intervention): an operator pauses a conversation, answers in
 * the agent's place, and resumes it — over the daemon's processing control (the router holds a
 * paused conversation's messages in the store). The takeover's refusals become the spec's codes:
 * a scope kind or action not served -32601 `not_implemented`, an intervention on a conversation
 * that is not paused -32004 `not_paused`, a reply outside the scope or an unknown session -32602;
 * a channel no plugin serves -32603 `channel_unavailable`, the plugin's own refusals as they are.
 */
import { AdminCode, InvalidParamsError, MethodNotFoundError, RpcError } from "@nexo/wire";
import {
  NotPausedError,
  TakeoverInputError,
  TakeoverNotImplementedError,
} from "../../daemon/processing/errors.js";
import { defineAdminDomain } from "../domain.js";
import { adminErrorOf } from "../service-errors.js";

/** Runs a takeover call, translating its typed errors (see above) and the services' ones. */
export async function viaTakeover<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof TakeoverNotImplementedError) throw new MethodNotFoundError(error.message);
    if (error instanceof NotPausedError)
      throw new RpcError(AdminCode.capabilityNotGranted, "not_paused", {
        reason: "not_paused",
        detail: error.message,
      });
    if (error instanceof TakeoverInputError)
      throw new InvalidParamsError(`invalid params: ${error.message}`, { reason: error.reason });
    throw adminErrorOf(error);
  }
}

export const processingDomain = defineAdminDomain({
  domain: "processing",
  handlers: ({ daemon }) => {
    const control = daemon?.processing;
    return (
      control && {
        "nexo/admin/processing/pause": ({ scope, reason, operator_token_hash }) =>
          viaTakeover(() => {
            const { changed, correlationId } = control.pause({
              scope,
              reason,
              operatorTokenHash: operator_token_hash,
            });
            return { changed, correlation_id: correlationId };
          }),
        "nexo/admin/processing/resume": ({ scope, operator_token_hash, session_id, summary_for_agent }) =>
          viaTakeover(() => {
            const ack = control.resume({
              scope,
              operatorTokenHash: operator_token_hash,
              sessionId: session_id,
              summary: summary_for_agent,
            });
            return {
              changed: ack.changed,
              correlation_id: ack.correlationId,
              ...(ack.drained > 0 ? { drained_pending: ack.drained } : {}),
              ...(ack.transcriptStamped === undefined ? {} : { transcript_stamped: ack.transcriptStamped }),
            };
          }),
        "nexo/admin/processing/intervention": ({ scope, action, operator_token_hash, session_id }) =>
          viaTakeover(async () => {
            const ack = await control.intervene({
              scope,
              action,
              operatorTokenHash: operator_token_hash,
              sessionId: session_id,
            });
            return {
              changed: true,
              correlation_id: ack.correlationId,
              transcript_stamped: ack.transcriptStamped,
            };
          }),
        "nexo/admin/processing/state": ({ scope }) => viaTakeover(() => ({ state: control.state(scope) })),
      }
    );
  },
});
