/**
 * How a host call ended, in the scenario vocabulary (wire terms, not nexo's classes), so that a
 * scenario's `expect` reads the same for any host:
 *
 *   {"result": <the reply in wire shape>}
 *   {"error": {"code", "message", "data"?}}          a JSON-RPC error, from the child or the host's checks
 *   {"failure": "timeout" | "connection_closed" | "unavailable" | "cancelled" | "protocol_error"}
 *
 * Each wrapper's return value is turned back into its wire shape (a channel receipt into
 * `{message_id, sent_at_unix}`, a provider's event stream into the assembled completion, …).
 */
import { ConnectionClosedError, RequestCancelledError, RpcError, TimeoutError } from "@nexo/wire";
import type { HookOutcome } from "../../../../src/engine/hooks.js";
import type { ProviderEvent, StopReason, ToolOutput } from "../../../../src/engine/types.js";
import { PluginProtocolError, PluginUnavailableError } from "../../../../src/extensions/plugins/errors.js";

export type Outcome = Record<string, unknown>;

/** A failed call. Anything else thrown is a bug in the runner or the host, and is rethrown. */
export function errorOutcome(error: unknown): Outcome {
  if (error instanceof RpcError) {
    return {
      error: {
        code: error.code,
        message: error.message,
        ...(error.data === undefined ? {} : { data: error.data }),
      },
    };
  }
  if (error instanceof TimeoutError) return { failure: "timeout" };
  if (error instanceof ConnectionClosedError) return { failure: "connection_closed" };
  if (error instanceof PluginUnavailableError) return { failure: "unavailable" };
  if (error instanceof RequestCancelledError) return { failure: "cancelled" };
  if (error instanceof PluginProtocolError) return { failure: "protocol_error", message: error.message };
  throw error;
}

/** A registry tool call: what the model would see. */
export function toolOutputOutcome(output: ToolOutput): Outcome {
  return {
    output: {
      text: output.output,
      is_error: output.isError === true,
      ...(output.metadata === undefined ? {} : { metadata: output.metadata }),
    },
  };
}

const FINISH_REASONS: Record<StopReason, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_use",
  refusal: "other",
  other: "other",
};

/**
 * A provider's events as the completion the host assembled (`result`) plus the text deltas in
 * the order the host surfaced them (`text_deltas`).
 */
export function completionOutcome(events: readonly ProviderEvent[]): Outcome {
  const textDeltas: string[] = [];
  const toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }> = [];
  const usage = { prompt_tokens: 0, completion_tokens: 0 };
  let finish: string | undefined;
  for (const event of events) {
    if (event.type === "text_delta") textDeltas.push(event.text);
    else if (event.type === "tool_call")
      toolCalls.push({ id: event.id, name: event.name, arguments: event.input });
    else if (event.type === "usage") {
      usage.prompt_tokens += event.usage.inputTokens ?? 0;
      usage.completion_tokens += event.usage.outputTokens ?? 0;
    } else if (event.type === "stop") finish = FINISH_REASONS[event.reason];
  }
  return {
    result: { text: textDeltas.join(""), tool_calls: toolCalls, usage, finish_reason: finish },
    text_deltas: textDeltas,
  };
}

/** A hook point's outcome: continue, block or transform, and whether the next handler still ran. */
export function hookOutcome(outcome: HookOutcome, pluginHandler: string, nextRan: boolean): Outcome {
  const decision =
    outcome.decision === "block" ? "block" : outcome.by?.startsWith(pluginHandler) ? "transform" : "continue";
  return {
    decision,
    payload: outcome.payload,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    next_handler_ran: nextRan,
  };
}
