/**
 * A scripted reply made concrete for one request: ids assigned, stop reason decided, usage
 * estimated from the request (four characters a token) unless the script fixes it. Both wire
 * formats are rendered from this one shape, so a script means the same thing on either endpoint.
 */
import type { MockResponse } from "./script.js";

/** Anthropic messages, OpenAI chat completions, OpenAI responses. */
export type Protocol = "anthropic" | "openai" | "responses";

export interface ResolvedReply {
  id: string;
  model: string;
  text: string;
  thinking: string | undefined;
  signature: string;
  toolCalls: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  stopReason: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal";
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => {
      const p = record(part);
      if (typeof p.text === "string") return p.text;
      // Anthropic tool_result blocks nest their own content.
      if (p.type === "tool_result") return textOfContent(p.content);
      return "";
    })
    .filter((t) => t !== "")
    .join("\n");
}

/**
 * The text a `match` is tested against: the last user message (Anthropic), or every message after
 * the last assistant one, user and tool alike (OpenAI, where tool results are separate messages;
 * in the Responses API's `input` they are `function_call_output` items after the `function_call`).
 */
export function lastUserText(protocol: Protocol, body: unknown): string {
  if (protocol === "responses") return responsesInputTail(record(body).input);
  const messages = Array.isArray(record(body).messages) ? (record(body).messages as unknown[]) : [];
  if (protocol === "anthropic") {
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = record(messages[i]);
      if (m.role === "user") return textOfContent(m.content);
    }
    return "";
  }
  const tail: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = record(messages[i]);
    if (m.role === "assistant") break;
    if (m.role === "user" || m.role === "tool") tail.unshift(textOfContent(m.content));
  }
  return tail.filter((t) => t !== "").join("\n");
}

function responsesInputTail(input: unknown): string {
  if (typeof input === "string") return input;
  const items = Array.isArray(input) ? input : [];
  const tail: string[] = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = record(items[i]);
    if (item.role === "assistant" || item.type === "function_call") break;
    if (item.type === "function_call_output") tail.unshift(textOfContent(item.output));
    else if (item.role === "user") tail.unshift(textOfContent(item.content));
  }
  return tail.filter((t) => t !== "").join("\n");
}

/**
 * The text a `match_any` is tested against: every message of the conversation, whatever its role
 * or turn — its text, tool calls' arguments and tool results (Anthropic and OpenAI `messages`, the
 * Responses API's `input` items). The system prompt is left out: it is the client's, not the
 * conversation's, and an agent's long one would match almost anything.
 */
export function conversationText(protocol: Protocol, body: unknown): string {
  const req = record(body);
  if (protocol === "responses") {
    if (typeof req.input === "string") return req.input;
    const items = Array.isArray(req.input) ? req.input : [];
    return items
      .map((item) => itemText(record(item)))
      .filter((t) => t !== "")
      .join("\n");
  }
  const messages = Array.isArray(req.messages) ? req.messages : [];
  return messages
    .map((message) => {
      const m = record(message);
      if (m.role === "system" || m.role === "developer") return "";
      const calls = Array.isArray(m.tool_calls)
        ? m.tool_calls.map((call) => String(record(record(call).function).arguments ?? ""))
        : [];
      return [textOfContent(m.content), ...blockInputs(m.content), ...calls]
        .filter((t) => t !== "")
        .join("\n");
    })
    .filter((t) => t !== "")
    .join("\n");
}

/** Anthropic tool_use blocks' inputs, as JSON (a match may name a file the model asked for). */
function blockInputs(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return content
    .map((part) => record(part))
    .filter((p) => p.type === "tool_use")
    .map((p) => JSON.stringify(p.input ?? {}));
}

/** One Responses API input item's text: a message's, a function call's arguments or its output. */
function itemText(item: Record<string, unknown>): string {
  if (item.role === "system" || item.role === "developer") return "";
  if (item.type === "function_call") return String(item.arguments ?? "");
  if (item.type === "function_call_output") return textOfContent(item.output);
  return textOfContent(item.content);
}

const tokens = (chars: number): number => Math.max(1, Math.ceil(chars / 4));

export function resolveReply(
  entry: MockResponse,
  body: unknown,
  protocol: Protocol,
  requestNumber: number,
): ResolvedReply {
  const req = record(body);
  const model = typeof req.model === "string" ? req.model : "mock-model";
  const prefix = protocol === "anthropic" ? "toolu_mock" : "call_mock";
  const idPrefix = { anthropic: "msg_mock", openai: "chatcmpl-mock", responses: "resp_mock" }[protocol];
  const toolCalls = (entry.tool_calls ?? []).map((call, i) => ({
    id: call.id ?? `${prefix}_${requestNumber}_${i}`,
    name: call.name,
    input: call.input,
  }));
  const text = entry.text ?? "";
  const promptChars = JSON.stringify([
    req.system ?? req.instructions ?? null,
    req.messages ?? req.input ?? [],
    req.tools ?? [],
  ]).length;
  const outputChars =
    text.length + (entry.thinking?.length ?? 0) + JSON.stringify(toolCalls.map((c) => c.input)).length;
  return {
    id: `${idPrefix}_${requestNumber}`,
    model,
    text,
    thinking: entry.thinking,
    signature: entry.signature ?? `mock-signature-${requestNumber}`,
    toolCalls,
    stopReason: entry.stop_reason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
    usage: {
      input: entry.usage?.input_tokens ?? tokens(promptChars),
      output: entry.usage?.output_tokens ?? tokens(outputChars),
      cacheRead: entry.usage?.cache_read_input_tokens ?? 0,
      cacheWrite: entry.usage?.cache_creation_input_tokens ?? 0,
    },
  };
}

/** Text in deltas of two words, so clients see a real multi-chunk stream. */
export function splitText(text: string): readonly string[] {
  return pieces(text).texts;
}

/** The deltas of splitText(text), each written as a JSON string (JSON.stringify). */
export function splitTextJson(text: string): readonly string[] {
  const entry = pieces(text);
  entry.json ??= entry.texts.map((piece) => JSON.stringify(piece));
  return entry.json;
}

interface Pieces {
  texts: readonly string[];
  json: readonly string[] | undefined;
}

/**
 * A script's texts, split, by text: a script serves the same few texts again and again (a
 * benchmark serves one 20,000-word answer hundreds of times), and splitting one with the regular
 * expression cost about as much as writing it out. Bounded so that a long run of distinct texts
 * (replaced scripts) does not keep them all.
 */
const PIECES = new Map<string, Pieces>();
const PIECES_KEPT = 64;

function pieces(text: string): Pieces {
  let entry = PIECES.get(text);
  if (entry === undefined) {
    const words = text.match(/\s*\S+\s*/g) ?? (text ? [text] : []);
    const texts: string[] = [];
    for (let i = 0; i < words.length; i += 2) texts.push(words.slice(i, i + 2).join(""));
    entry = { texts, json: undefined };
    if (PIECES.size >= PIECES_KEPT) PIECES.delete(PIECES.keys().next().value as string);
    PIECES.set(text, entry);
  }
  return entry;
}

/** JSON arguments in fragments cut mid-token, as vendors send them. */
export function splitJson(json: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}
