/**
 * A recogniser for the chunk a vendor's stream sends most: the same envelope (an OpenAI chunk's
 * id, created, model, fingerprint, choice index…; an Anthropic event's type, index and delta type)
 * around a different piece of text each time. Parsing that chunk with JSON.parse was most of a
 * provider's CPU per delta — an OpenAI chunk's envelope is about 180 of its 220 bytes — so a
 * stream's text chunks are read here by comparing the text around the piece with the envelope
 * learnt from an earlier chunk, and taking the piece between (docs/performance.md,
 * "OpenAI-format streaming").
 *
 * Why the result is the one JSON.parse gives. An envelope is learnt only from a chunk that
 * JSON.parse read and that JSON.stringify writes back as exactly the same text (so it has no
 * whitespace, no escapes written differently, no duplicate or reordered keys); writing it again
 * with a sentinel in place of its text gives the text before the string's opening quote
 * (`prefix`) and after its closing quote (`suffix`). A later chunk that is `prefix` + m +
 * `suffix`, where m holds no `"`, no `\` and no control character, is a JSON text whose only
 * string that differs from the learnt chunk's is that one: each character of m stands for itself
 * in a JSON string and none of them can end it, so JSON.parse would read the learnt chunk with m
 * as its text (text with escapes: see `escaped`). Anything else is left to JSON.parse. The
 * format's `locate` accepts only a chunk whose decoding is that text delta and nothing else (no
 * usage, error, finish reason, reasoning or tool call), so a chunk read here decodes to exactly
 * its text.
 */

import type { TextFrame } from "./sse.js";

/**
 * Where a parsed chunk keeps its text: `holder[key]`, a string. A format's `locate` returns it
 * only for a chunk whose whole effect, decoded, is a text delta of that string.
 */
export interface TextField {
  holder: Record<string, unknown>;
  key: string;
}

/** Never in a chunk's own text: JSON.stringify writes its control characters as `\u0000`, `\u0001`. */
const SENTINEL = "\u0000nexo-content\u0001";
const SENTINEL_JSON = JSON.stringify(SENTINEL);
/**
 * Envelopes learnt per stream at most. A server whose every chunk differs beyond its text
 * (OpenAI's optional `obfuscation` padding) would otherwise pay a second and third
 * JSON.stringify per chunk for envelopes that never match again.
 */
const MAX_LEARNT = 4;

export class TextChunks {
  private prefix = "";
  private suffix = "";
  private learnt = 0;

  constructor(private readonly locate: (chunk: unknown) => TextField | undefined) {}

  /** The chunk's text when `data` is the learnt envelope around it; else undefined. */
  text(data: string): string | undefined {
    const prefix = this.prefix;
    if (prefix === "") return undefined;
    const end = data.length - this.suffix.length;
    // Compared as substrings: V8's startsWith/endsWith walk the characters one by one, five
    // times slower here than the string equality (a memory compare) over a ~150-character envelope.
    if (
      end < prefix.length ||
      data.substring(0, prefix.length) !== prefix ||
      data.substring(end) !== this.suffix
    )
      return undefined;
    const content = data.slice(prefix.length, end);
    for (let i = 0; i < content.length; i++) {
      const code = content.charCodeAt(i);
      if (code === 34 || code === 92 || code < 32) return escaped(content);
    }
    return content;
  }

  /**
   * Learns the envelope of `chunk`, JSON.parse's reading of `data`, if it qualifies (see above);
   * says whether it did.
   */
  learn(data: string, chunk: unknown): boolean {
    if (this.learnt >= MAX_LEARNT) return false;
    const field = this.locate(chunk);
    if (field === undefined) return false;
    this.learnt++;
    if (JSON.stringify(chunk) !== data) return false;
    const { holder, key } = field;
    const text = holder[key];
    holder[key] = SENTINEL;
    const marked = JSON.stringify(chunk);
    holder[key] = text;
    const at = marked.indexOf(SENTINEL_JSON);
    if (at === -1 || marked.lastIndexOf(SENTINEL_JSON) !== at) return false;
    this.prefix = marked.slice(0, at + 1);
    this.suffix = marked.slice(at + SENTINEL_JSON.length - 1);
    return true;
  }

  /**
   * The learnt envelope as a whole SSE message in the body's text (sse.ts): the message that
   * taught it had the `event` name given (null: none) and one `data:` line, written with the
   * space after the colon as every vendor writes it. A message of that text around a piece is
   * what `text` reads as the piece.
   */
  frame(event: string | null): TextFrame | undefined {
    if (this.prefix === "") return undefined;
    const head = `${event === null ? "" : `event: ${event}\n`}data: ${this.prefix}`;
    return { head, tail: `${this.suffix}\n\n` };
  }
}

/** Where an OpenAI chunk's text is, if the chunk is only text (what OpenAiStreamDecoder.push reads). */
export function openAiTextField(chunk: unknown): TextField | undefined {
  if (!isPlainObject(chunk) || chunk.usage || chunk.error) return undefined;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length === 0) return undefined;
  const choice: unknown = choices[0];
  if (!isPlainObject(choice) || choice.finish_reason) return undefined;
  const delta = choice.delta;
  if (!isPlainObject(delta) || typeof delta.content !== "string") return undefined;
  if (delta.reasoning_content !== undefined || delta.reasoning !== undefined || delta.tool_calls != null)
    return undefined;
  return { holder: delta, key: "content" };
}

/**
 * Where an Anthropic event's text is, if the event is a text delta (AnthropicStreamDecoder reads
 * only `type`, `delta.type` and `delta.text` of one; its block index changes nothing).
 */
export function anthropicTextField(event: unknown): TextField | undefined {
  if (!isPlainObject(event) || event.type !== "content_block_delta") return undefined;
  const delta = event.delta;
  if (!isPlainObject(delta) || delta.type !== "text_delta" || typeof delta.text !== "string")
    return undefined;
  return { holder: delta, key: "text" };
}

/**
 * Text with an escape (`\n`, `\"`, `\u…`) is read as its own JSON string literal: when that
 * literal is valid, its closing quote is the suffix's first character, so in the whole chunk the
 * string ends exactly there and JSON.parse reads the same value. Otherwise (an unescaped
 * quote or control character) the whole chunk is left to JSON.parse.
 */
function escaped(content: string): string | undefined {
  try {
    return JSON.parse(`"${content}"`) as string;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
