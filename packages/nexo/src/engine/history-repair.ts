/**
 * A stored history made valid for the next model request. Within a turn the engine gives every
 * tool call its result, even on errors and cancellation (turn.ts). A process killed while a tool
 * ran leaves what no turn would: an assistant message asking for tools with no result after it —
 * and both vendors' APIs refuse a request holding such a call, so without this every later turn
 * of that conversation would fail. Each call left without a result gets one saying the run was
 * interrupted, placed where the API expects it: in the user message right after the call (a new
 * one when the call ends the history or a plain user message follows).
 *
 * The stored transcript is not rewritten: the repair is redone on each load, and what the model
 * is told matches what happened (nobody knows whether the tool took effect).
 */
import type { ChatMessage, ContentBlock, ToolResultBlock } from "../conversation.js";

export const INTERRUPTED_TOOL_RESULT =
  "interrupted: nexo stopped before this tool call finished, so its result was lost; it may or may not have taken effect";

/** `history` with a result for every tool call; the same array when nothing was missing. */
export function withToolResults(history: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let changed = false;
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!;
    out.push(message);
    if (message.role !== "assistant") continue;
    const calls = message.content.filter((block) => block.type === "tool_use");
    if (calls.length === 0) continue;
    const next = history[i + 1];
    const answered = new Set<string>();
    if (next?.role === "user") {
      for (const block of next.content) if (block.type === "tool_result") answered.add(block.toolUseId);
    }
    const missing: ToolResultBlock[] = calls
      .filter((call) => !answered.has(call.id))
      .map((call) => ({
        type: "tool_result",
        toolUseId: call.id,
        content: INTERRUPTED_TOOL_RESULT,
        isError: true,
      }));
    if (missing.length === 0) continue;
    changed = true;
    if (next?.role === "user") {
      // Results first: the APIs want a call's results at the start of the message after it.
      const content: ContentBlock[] = [
        ...next.content.filter((block) => block.type === "tool_result"),
        ...missing,
        ...next.content.filter((block) => block.type !== "tool_result"),
      ];
      out.push({ role: "user", content });
      i++;
    } else {
      out.push({ role: "user", content: missing });
    }
  }
  return changed ? out : (history as ChatMessage[]);
}
