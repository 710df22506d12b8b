/**
 * Conversation content as the store persists it: the shared shapes of src/conversation.ts (the
 * engine uses the same ones), validated and redacted on the way in.
 */
import { z } from "zod";
import type { ContentBlock } from "../conversation.js";
import { StoreError } from "./errors.js";
import { addCounts, emptyCounts, type RedactionCounts, redactJson } from "./redact.js";
import { firstIssue, toPlainJson } from "./validate.js";

export type {
  ChatMessage,
  ContentBlock,
  ImageBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from "../conversation.js";

const contentBlockSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("thinking"), text: z.string(), signature: z.string().optional() }),
  z.looseObject({ type: z.literal("image"), mediaType: z.string(), data: z.string() }),
  z.looseObject({
    type: z.literal("tool_use"),
    id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()),
  }),
  z.looseObject({
    type: z.literal("tool_result"),
    toolUseId: z.string(),
    content: z.string(),
    isError: z.boolean().optional(),
  }),
]);
const contentSchema = z.array(contentBlockSchema);

/** Checks content from the caller; a plain string is shorthand for one text block. */
export function normalizeContent(content: string | readonly ContentBlock[]): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const parsed = contentSchema.safeParse(toPlainJson("content", content));
  if (!parsed.success) {
    throw new StoreError("invalid_argument", firstIssue("content", parsed.error.issues));
  }
  return parsed.data as ContentBlock[];
}

/**
 * Fields that machines need byte for byte: call ids (a tool_result must still find its tool_use),
 * tool names, image bytes and thinking signatures (base64 that a pattern could corrupt but that
 * holds no readable text). Every other field, including ones a newer engine adds, is redacted.
 */
const MACHINE_FIELDS: Record<ContentBlock["type"], ReadonlySet<string>> = {
  text: new Set(["type"]),
  thinking: new Set(["type", "signature"]),
  image: new Set(["type", "mediaType", "data"]),
  tool_use: new Set(["type", "id", "name"]),
  tool_result: new Set(["type", "toolUseId", "isError"]),
};

/**
 * Redacts what people and tools wrote: text, thinking, tool input and output. A thinking block
 * whose text was redacted no longer matches its signature; providers only need the signature
 * within the turn that produced it, and the store holds finished turns.
 */
export function redactContent(blocks: readonly ContentBlock[]): {
  blocks: ContentBlock[];
  counts: RedactionCounts;
} {
  const counts = emptyCounts();
  const out = blocks.map((block): ContentBlock => {
    const keep = MACHINE_FIELDS[block.type];
    const fields = Object.entries(block);
    const result = redactJson(Object.fromEntries(fields.filter(([key]) => !keep.has(key))));
    addCounts(counts, result.counts);
    // Rebuilt in the original key order, so a stored block reads like the one that was appended.
    return Object.fromEntries(
      fields.map(([key, value]) => [key, keep.has(key) ? value : result.value[key]]),
    ) as unknown as ContentBlock;
  });
  return { blocks: out, counts };
}

/**
 * The searchable text of an entry: what was said and what tools were asked and answered. Thinking
 * is left out (it is the model's scratch work, not the conversation) and so are image bytes.
 */
export function searchableText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "tool_use":
        parts.push(block.name, ...stringLeaves(block.input));
        break;
      case "tool_result":
        parts.push(block.content);
        break;
      case "thinking":
      case "image":
        break;
    }
  }
  return parts.filter((part) => part !== "").join("\n");
}

function stringLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number" || typeof value === "boolean") out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) stringLeaves(item, out);
  return out;
}
