/**
 * OpenAI Responses API wire format (`POST /v1/responses`), as the API sends it — what Codex and the
 * `openai` SDK's `responses.create` speak. Streamed: SSE events, each `event: <type>` and
 * `data: {type, sequence_number, …}`, in the API's order:
 *
 *   response.created, response.in_progress                      (the response, status in_progress)
 *   per output item: response.output_item.added, then
 *     reasoning → reasoning_summary_part.added, reasoning_summary_text.delta…, .done, part.done
 *     message   → content_part.added, output_text.delta…, output_text.done, content_part.done
 *     function_call → function_call_arguments.delta…, function_call_arguments.done
 *   response.output_item.done (the whole item)
 *   response.completed                                          (the whole response, with usage)
 *
 * Not streamed: the `response` object itself. Errors use OpenAI's `{error:{…}}` body (openai-wire.ts).
 * A `max_tokens` stop ends as `status: "incomplete"` with `incomplete_details.reason`.
 */
import type { ResolvedReply } from "./reply.js";
import { splitJson, splitText } from "./reply.js";

interface OutputItem {
  item: Record<string, unknown>;
  /** The events between the item's `output_item.added` and `output_item.done`. */
  body: (outputIndex: number) => Array<Record<string, unknown>>;
}

function usageOf(reply: ResolvedReply): unknown {
  const input = reply.usage.input + reply.usage.cacheRead;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: reply.usage.cacheRead },
    output_tokens: reply.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + reply.usage.output,
  };
}

function outputItems(reply: ResolvedReply): OutputItem[] {
  const items: OutputItem[] = [];
  if (reply.thinking !== undefined) {
    const id = `rs_${reply.id}`;
    const text = reply.thinking;
    items.push({
      item: { id, type: "reasoning", summary: [{ type: "summary_text", text }] },
      body: (output_index) => [
        {
          type: "response.reasoning_summary_part.added",
          item_id: id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text: "" },
        },
        ...splitText(text).map((delta) => ({
          type: "response.reasoning_summary_text.delta",
          item_id: id,
          output_index,
          summary_index: 0,
          delta,
        })),
        { type: "response.reasoning_summary_text.done", item_id: id, output_index, summary_index: 0, text },
        {
          type: "response.reasoning_summary_part.done",
          item_id: id,
          output_index,
          summary_index: 0,
          part: { type: "summary_text", text },
        },
      ],
    });
  }
  if (reply.text !== "" || reply.toolCalls.length === 0) {
    const id = `msg_${reply.id}`;
    const text = reply.text;
    const part = (t: string) => ({ type: "output_text", text: t, annotations: [], logprobs: [] });
    items.push({
      item: { id, type: "message", role: "assistant", status: "completed", content: [part(text)] },
      body: (output_index) => {
        const at = { item_id: id, output_index, content_index: 0 };
        return [
          { type: "response.content_part.added", ...at, part: part("") },
          ...splitText(text).map((delta) => ({
            type: "response.output_text.delta",
            ...at,
            delta,
            logprobs: [],
          })),
          { type: "response.output_text.done", ...at, text, logprobs: [] },
          { type: "response.content_part.done", ...at, part: part(text) },
        ];
      },
    });
  }
  for (const call of reply.toolCalls) {
    const id = `fc_${call.id}`;
    const args = JSON.stringify(call.input);
    items.push({
      item: {
        id,
        type: "function_call",
        status: "completed",
        call_id: call.id,
        name: call.name,
        arguments: args,
      },
      body: (output_index) => [
        ...splitJson(args).map((delta) => ({
          type: "response.function_call_arguments.delta",
          item_id: id,
          output_index,
          delta,
        })),
        {
          type: "response.function_call_arguments.done",
          item_id: id,
          output_index,
          name: call.name,
          arguments: args,
        },
      ],
    });
  }
  return items;
}

/** The `response` object: `inProgress` for response.created (no output yet), else the finished one. */
function responseObject(reply: ResolvedReply, created: number, inProgress: boolean): Record<string, unknown> {
  const incomplete = reply.stopReason === "max_tokens";
  return {
    id: reply.id,
    object: "response",
    created_at: created,
    status: inProgress ? "in_progress" : incomplete ? "incomplete" : "completed",
    ...(inProgress ? {} : { completed_at: created }),
    error: null,
    incomplete_details: !inProgress && incomplete ? { reason: "max_output_tokens" } : null,
    instructions: null,
    model: reply.model,
    output: inProgress ? [] : outputItems(reply).map((o) => o.item),
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    usage: inProgress ? null : usageOf(reply),
  };
}

export function responsesStreamEvents(reply: ResolvedReply, created: number): string[] {
  const events: Array<Record<string, unknown>> = [
    { type: "response.created", response: responseObject(reply, created, true) },
    { type: "response.in_progress", response: responseObject(reply, created, true) },
  ];
  outputItems(reply).forEach(({ item, body }, output_index) => {
    const opening =
      item.type === "message"
        ? { ...item, status: "in_progress", content: [] }
        : item.type === "function_call"
          ? { ...item, status: "in_progress", arguments: "" }
          : { ...item, summary: [] };
    events.push({ type: "response.output_item.added", output_index, item: opening });
    events.push(...body(output_index));
    events.push({ type: "response.output_item.done", output_index, item });
  });
  const finished = responseObject(reply, created, false);
  events.push({
    type: finished.status === "incomplete" ? "response.incomplete" : "response.completed",
    response: finished,
  });
  return events.map(
    (event, sequence_number) =>
      `event: ${event.type as string}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`,
  );
}

export function responsesObject(reply: ResolvedReply, created: number): unknown {
  return responseObject(reply, created, false);
}
