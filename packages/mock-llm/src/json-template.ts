/**
 * An event's JSON text with one string left open, for the deltas of a long answer: the event is
 * the same around every piece of text, so it is written once with a marker where the piece goes
 * and cut there. JSON.stringify writes a string value the same wherever it stands, so
 * `head + JSON.stringify(piece) + tail` is exactly JSON.stringify of the event holding the piece:
 * the stream's bytes do not change, and each delta costs one concatenation instead of a
 * JSON.stringify of its whole envelope (docs/performance.md, "OpenAI-format streaming").
 */

/**
 * Stands for the open string. A request can put it elsewhere in the event (in the model's name);
 * then there is no template and the caller writes each event whole.
 */
export const MARK = "\u0000mock-llm-open-string\u0001";
const MARK_JSON = JSON.stringify(MARK);

export interface OpenString {
  /** The text before the string's opening quote (the quote excluded). */
  head: string;
  /** The text after its closing quote. */
  tail: string;
}

/** `build(mark)` is the event with `mark` as its open string; undefined if MARK is in it elsewhere too. */
export function openString(build: (mark: string) => unknown): OpenString | undefined {
  const text = JSON.stringify(build(MARK));
  const at = text.indexOf(MARK_JSON);
  if (at === -1 || text.indexOf(MARK_JSON, at + 1) !== -1) return undefined;
  return { head: text.slice(0, at), tail: text.slice(at + MARK_JSON.length) };
}
