/**
 * Finding phone numbers in free text. Digits are everywhere in chat (dates, times, versions,
 * amounts, order ids), so a digit run alone is never enough: a number counts as a phone only when
 * its shape or its context says so.
 *
 *   1. international: "+" then 8–15 digits, optionally grouped ("+54 9 11 2233-4455",
 *      "+44 (0)20 7946 0958", "+4915112345678");
 *   2. North American: "(555) 123-4567", "555-123-4567", "555.123.4567", "1-800-555-1234";
 *   3. national with a trunk "0", in at least two groups, 9–12 digits ("030 1234567",
 *      "07700 900123", "06 12 34 56 78", "011 4555-1234");
 *   4. after a word that announces one ("tel: 5551234567", "WhatsApp 11 2233 4455",
 *      "mi celular es 1122334455"): any 7–15 digits, grouped or not.
 *
 * Anything shaped like a date (2024-01-15, 15/01/2024, 15.01.2024) is not a phone.
 */

export interface Span {
  start: number;
  end: number;
}

/** E.164 caps a full number at 15 digits; fewer than 8 with a country code is not a subscriber. */
const E164_MIN = 8;
const E164_MAX = 15;

const INTERNATIONAL = /(?<![A-Za-z0-9_+])\+\d{1,4}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,6})){0,8}/g;
// The (?<!\d[ .-]) lookbehinds keep both from matching the tail of a longer grouped number.
const NORTH_AMERICAN =
  /(?<![A-Za-z0-9_+.-])(?<!\d[ .-])(?:1[ .-])?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![A-Za-z0-9_]|[.-]\d)/g;
const TRUNK_NATIONAL =
  /(?<![A-Za-z0-9_+.,/-])(?<!\d[ .-])(?:\(0\d{1,4}\)|0\d{1,4})(?:[ .-]\d{2,8}){1,4}(?![A-Za-z0-9_]|[.,/-]\d)/g;
const ANNOUNCED = new RegExp(
  // Placeholders neither announce ("[REDACTED:phone]") nor sit between a word and its number.
  "(?<![\\p{L}\\p{N}_])(?<!REDACTED:)(?:phone|telephone|tel|mobile|cell|cellphone|whatsapp|sms|fax|call me|text me|" +
    "tel[eé]fono|tlf|tfno|m[oó]vil|celular|cel|fono|handy|telefon|portable|t[eé]l[eé]phone)" +
    "(?![\\p{L}\\p{N}_])[^\\d+\\n[\\]]{0,24}(\\+?\\(?\\d(?:[ .()-]{0,2}\\d){6,14})(?!\\d)",
  "giu",
);
const DATE_START = /^(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?!\d)/;

const digitCount = (s: string): number => s.replace(/\D/g, "").length;

export function findPhoneNumbers(text: string): Span[] {
  if (!/\d/.test(text)) return [];
  const spans: Span[] = [];

  for (const m of text.matchAll(INTERNATIONAL)) {
    const candidate = trimToE164(m[0]);
    if (candidate !== undefined) spans.push({ start: m.index, end: m.index + candidate.length });
  }
  for (const m of text.matchAll(NORTH_AMERICAN)) {
    spans.push({ start: m.index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(TRUNK_NATIONAL)) {
    const digits = digitCount(m[0]);
    if (digits >= 9 && digits <= 12 && !DATE_START.test(m[0].replace(/^\(|\)/g, ""))) {
      spans.push({ start: m.index, end: m.index + m[0].length });
    }
  }
  for (const m of text.matchAll(ANNOUNCED)) {
    const number = m[1]!;
    const digits = digitCount(number);
    if (digits >= 7 && digits <= E164_MAX && !DATE_START.test(number)) {
      const start = m.index + m[0].length - number.length;
      spans.push({ start, end: start + number.length });
    }
  }
  return disjoint(spans);
}

/**
 * The international pattern is greedy, so "+44 20 7946 0958 2024" takes the year too; trailing
 * groups are dropped until the number fits E.164, and a candidate that never does is rejected.
 */
function trimToE164(candidate: string): string | undefined {
  let current = candidate;
  while (digitCount(current) > E164_MAX) {
    const shorter = current.replace(/[ .-]?(?:\(\d{1,4}\)|\d{1,6})$/, "");
    if (shorter === current) return undefined;
    current = shorter;
  }
  return digitCount(current) >= E164_MIN ? current : undefined;
}

/** Overlapping finds from different rules become one span: the earliest start, then the longest. */
function disjoint(spans: Span[]): Span[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const span of spans) {
    const last = out.at(-1);
    if (last !== undefined && span.start < last.end) {
      last.end = Math.max(last.end, span.end);
    } else {
      out.push({ ...span });
    }
  }
  return out;
}
