/**
 * Context accounting and compaction. Before each model request the turn estimates how many tokens
 * the request will take; when that would pass the compaction threshold of the model's window, the
 * older part of the conversation is summarised by the model itself and replaced by the summary, so
 * the request fits. The cut is always placed before a user message that is not a tool result,
 * so no tool call is ever separated from its result.
 */
import type { ChatMessage, ContentBlock, LlmProvider, ToolSpec } from "./types.js";

/** A rough, provider-independent estimate: about four characters per token. */
export function estimateTokens(
  system: string | undefined,
  messages: ChatMessage[],
  tools: readonly ToolSpec[] = [],
): number {
  let chars = system?.length ?? 0;
  for (const m of messages) chars += messageChars(m);
  return Math.ceil((chars + toolSpecChars(tools)) / 4);
}

/** The size one message adds to a request, in the estimate's characters. */
export function messageChars(message: ChatMessage): number {
  let chars = 0;
  for (const b of message.content) chars += blockChars(b);
  return chars;
}

/** Serialised schema sizes, by schema object: tools keep their schema for life, so this is computed once. */
const schemaChars = new WeakMap<object, number>();

/**
 * Sizes of frozen spec lists, by list: a registry hands out one frozen list until its tools change
 * (ToolRegistry.specs), so a turn measures it with one lookup instead of one per tool.
 */
const frozenListChars = new WeakMap<readonly ToolSpec[], number>();

/** The size of the tool definitions sent with every request. */
export function toolSpecChars(tools: readonly ToolSpec[]): number {
  const frozen = Object.isFrozen(tools);
  if (frozen) {
    const known = frozenListChars.get(tools);
    if (known !== undefined) return known;
  }
  let chars = 0;
  for (const t of tools) {
    let size = schemaChars.get(t.inputSchema);
    if (size === undefined) {
      size = JSON.stringify(t.inputSchema).length;
      schemaChars.set(t.inputSchema, size);
    }
    chars += t.name.length + t.description.length + size;
  }
  if (frozen) frozenListChars.set(tools, chars);
  return chars;
}

function blockChars(b: ContentBlock): number {
  switch (b.type) {
    case "text":
    case "thinking":
      return b.text.length;
    case "tool_use":
      return b.name.length + JSON.stringify(b.input).length;
    case "tool_result":
      return b.content.length;
    case "image":
      return 1600 * 4; // images are billed roughly per tile, not per base64 byte
  }
}

export interface CompactionOptions {
  /** The model's context window in tokens. */
  contextWindow: number;
  /** Tokens reserved for the reply. */
  maxTokens: number;
  /** Compact when the request would exceed this fraction of (window - reply). Default 0.8. */
  threshold?: number;
  /** Keep at least this many of the most recent user messages verbatim. Default 2. */
  keepRecentUserMessages?: number;
}

export function needsCompaction(estimated: number, options: CompactionOptions): boolean {
  const budget = (options.contextWindow - options.maxTokens) * (options.threshold ?? 0.8);
  return estimated > budget;
}

/**
 * Index of the first message to keep: the start of the Nth-from-last user message that carries
 * the user's words (not tool results). Returns 0 when there is nothing worth compacting.
 */
export function compactionCut(messages: ChatMessage[], keepRecentUserMessages = 2): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user" && !m.content.some((b) => b.type === "tool_result")) {
      seen++;
      if (seen === keepRecentUserMessages) return i;
    }
  }
  return 0;
}

export const SUMMARY_PREFIX = "[Summary of the earlier conversation, written by nexo's compaction]";

/** Renders messages as plain text for the summariser. */
export function transcriptText(messages: ChatMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    for (const b of m.content) {
      if (b.type === "text") lines.push(`${m.role}: ${b.text}`);
      else if (b.type === "tool_use")
        lines.push(`${m.role} called ${b.name} with ${JSON.stringify(b.input)}`);
      else if (b.type === "tool_result")
        lines.push(`tool result${b.isError ? " (error)" : ""}: ${b.content.slice(0, 2000)}`);
    }
  }
  return lines.join("\n");
}

/**
 * Summarises `messages[0..cut)` with the provider and returns the new history: one user message
 * holding the summary, an assistant acknowledgement (so roles keep alternating), then the kept tail.
 */
export async function compact(
  provider: LlmProvider,
  model: string,
  messages: ChatMessage[],
  cut: number,
  signal: AbortSignal,
): Promise<{ messages: ChatMessage[]; summary: string; removed: number }> {
  const old = messages.slice(0, cut);
  let summary = "";
  for await (const event of provider.stream({
    model,
    system:
      "You compress conversations. Summarise the conversation below so that an assistant can continue it: " +
      "keep facts, decisions, file names, open tasks and the user's preferences. Be concise. Plain text only.",
    messages: [{ role: "user", content: [{ type: "text", text: transcriptText(old) }] }],
    maxTokens: 1024,
    signal,
  })) {
    if (event.type === "text_delta") summary += event.text;
  }
  summary = summary.trim() || "(the earlier conversation could not be summarised)";
  return {
    messages: [
      { role: "user", content: [{ type: "text", text: `${SUMMARY_PREFIX}\n${summary}` }] },
      {
        role: "assistant",
        content: [{ type: "text", text: "Understood; I will continue from that summary." }],
      },
      ...messages.slice(cut),
    ],
    summary,
    removed: old.length,
  };
}
