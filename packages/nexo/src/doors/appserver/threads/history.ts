/**
 * A thread's past turns, rebuilt from its transcript — the one record of the conversation, which
 * the model's history is also read from. A turn begins with a user message that is not only tool
 * results; what the model said and did until the next one belongs to it:
 *
 *   user text            → userMessage
 *   assistant thinking   → reasoningContent
 *   assistant text       → agentMessage
 *   assistant tool_use   → toolCall (+ fileChange for an Edit, whose result is the diff)
 *   user tool_result     → toolResult
 *
 * Turn ids are `turn_001`, `turn_002`, … in order; item ids `item_001`, … within each turn. A turn
 * counts as completed unless the thread remembered another outcome for it (records.ts).
 */
import type { Item, Turn } from "@nexo/wire/schemas/appserver";
import type { ContentBlock, TranscriptEntry } from "../../../store/index.js";
import { fileChangeOfEdit } from "./file-changes.js";
import type { TurnOutcome } from "./records.js";

export function turnId(index: number): string {
  return `turn_${String(index).padStart(3, "0")}`;
}

export function itemId(index: number): string {
  return `item_${String(index).padStart(3, "0")}`;
}

/** Whether a user message starts a turn (rather than carrying tool results back to the model). */
export function startsTurn(content: readonly ContentBlock[]): boolean {
  return content.some((block) => block.type !== "tool_result");
}

/** The number of turns in a transcript. */
export function countTurns(entries: readonly TranscriptEntry[]): number {
  let count = 0;
  for (const entry of entries) if (entry.role === "user" && startsTurn(entry.content)) count++;
  return count;
}

export function userText(content: readonly ContentBlock[]): string {
  return content
    .filter((block): block is Extract<ContentBlock, { type: "text" }> => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

function resultText(content: string | readonly ContentBlock[]): string {
  return typeof content === "string" ? content : userText(content);
}

export function rebuildTurns(
  threadId: string,
  entries: readonly TranscriptEntry[],
  outcomes: Record<string, TurnOutcome> = {},
): Turn[] {
  const turns: Turn[] = [];
  let items: Item[] = [];
  let current: Turn | undefined;
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  const add = (
    entry: TranscriptEntry,
    item: Omit<Item, "id" | "turnId" | "createdAt" | "completedAt" | "status">,
  ) => {
    if (!current) return;
    items.push({
      ...item,
      id: itemId(items.length + 1),
      turnId: current.id,
      status: "completed",
      createdAt: entry.createdAt,
      completedAt: entry.createdAt,
      payloadKind: item.type,
    } as Item);
  };

  for (const entry of entries) {
    if (entry.role === "user" && startsTurn(entry.content)) {
      const id = turnId(turns.length + 1);
      items = [];
      const outcome = outcomes[id];
      current = {
        id,
        threadId,
        status: outcome?.status ?? "completed",
        startedAt: entry.createdAt,
        completedAt: entry.createdAt,
        ...(outcome?.error === undefined ? {} : { error: outcome.error }),
        items,
      };
      turns.push(current);
      const text = userText(entry.content);
      add(entry, {
        type: "userMessage",
        payload: { text, nativeInputParts: [{ type: "text", text }], deliveryMode: "normal" },
      });
      continue;
    }
    if (!current) continue;
    current.completedAt = entry.createdAt;
    for (const block of entry.content) {
      switch (block.type) {
        case "thinking":
          if (block.text) add(entry, { type: "reasoningContent", payload: { text: block.text } });
          break;
        case "text":
          if (entry.role === "assistant" && block.text) {
            add(entry, { type: "agentMessage", payload: { text: block.text } });
          }
          break;
        case "tool_use":
          calls.set(block.id, { name: block.name, input: block.input });
          add(entry, {
            type: "toolCall",
            payload: { toolName: block.name, arguments: block.input, callId: block.id },
          });
          break;
        case "tool_result": {
          const result = resultText(block.content);
          const success = block.isError !== true;
          add(entry, { type: "toolResult", payload: { callId: block.toolUseId, result, success } });
          const call = calls.get(block.toolUseId);
          const change = call && success ? fileChangeOfEdit(call.name, call.input, result) : undefined;
          if (change) {
            add(entry, {
              type: "fileChange",
              payload: { callId: block.toolUseId, changes: [change], status: "completed" },
            });
          }
          break;
        }
        default:
          break;
      }
    }
  }
  return turns;
}
