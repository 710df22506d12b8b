/**
 * Finds e-mail addresses, payment card numbers and phone numbers in free text and replaces each
 * with `[REDACTED:email]`, `[REDACTED:card]` or `[REDACTED:phone]`.
 *
 * The passes run in that order on purpose: an address can contain digits a phone pass would
 * take, and a card number is a long run of digits a phone pass would take too. The placeholders
 * contain no digits and no `@`, so a later pass never matches inside an earlier replacement.
 *
 * These are heuristics, tuned to redact rather than to miss:
 * - a card is 13 to 19 digits, optionally grouped by single spaces or hyphens, that pass the
 *   Luhn check (so most order numbers and timestamps are left alone);
 * - a phone is 9 to 15 digits (7 to 15 after a leading `+`) grouped by spaces, hyphens, dots or
 *   parentheses; ISO dates and decimals such as 3.14159265 are not phones. A bare nine-digit
 *   number (an order id, say) IS redacted as a phone: the cost of a false positive here is a
 *   placeholder, the cost of a false negative is a leaked number.
 */

export type PiiKind = "email" | "card" | "phone";

export interface Redaction {
  text: string;
  /** How many of each kind were replaced. */
  counts: Record<PiiKind, number>;
}

const EMAIL =
  /[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}/g;

/** 13–19 digits, single space or hyphen between any two, not glued to a word. */
const CARD_CANDIDATE = /(?<![\w.])\d(?:[ -]?\d){12,18}(?![\w])/g;

/** An optional `+`, then digits and the usual grouping characters, ending on a digit. */
const PHONE_CANDIDATE = /(?<![\w+.])(\+)?\(?\d[\d ().-]{5,}\d(?![\w])/g;

const ISO_DATE_START = /^\d{4}-\d{2}-\d{2}/;

export function placeholder(kind: PiiKind): string {
  return `[REDACTED:${kind}]`;
}

/** The Luhn checksum every payment card number satisfies. `digits` holds only 0-9. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function looksLikePhone(candidate: string, hasPlus: boolean): boolean {
  const digits = candidate.replace(/\D/g, "").length;
  if (digits > 15 || digits < (hasPlus ? 7 : 9)) return false;
  if (ISO_DATE_START.test(candidate)) return false;
  // One dot is a decimal number; phones written with dots use them between every group.
  if ((candidate.match(/\./g) ?? []).length === 1) return false;
  if (/[ ().-]{3,}/.test(candidate)) return false;
  const open = candidate.indexOf("(");
  const close = candidate.indexOf(")");
  if (open !== candidate.lastIndexOf("(") || close !== candidate.lastIndexOf(")")) return false;
  if ((open === -1) !== (close === -1) || close < open) return false;
  return true;
}

export function redactPii(text: string): Redaction {
  const counts: Record<PiiKind, number> = { email: 0, card: 0, phone: 0 };
  let out = text.replace(EMAIL, () => {
    counts.email++;
    return placeholder("email");
  });
  out = out.replace(CARD_CANDIDATE, (match) => {
    if (!luhnValid(match.replace(/[ -]/g, ""))) return match;
    counts.card++;
    return placeholder("card");
  });
  out = out.replace(PHONE_CANDIDATE, (match, plus: string | undefined) => {
    if (!looksLikePhone(match, plus !== undefined)) return match;
    counts.phone++;
    return placeholder("phone");
  });
  return { text: out, counts };
}

/** `2 email addresses and 1 phone number`, for the hook's `reason`. */
export function describeCounts(counts: Record<PiiKind, number>): string {
  const nouns: Record<PiiKind, [string, string]> = {
    email: ["email address", "email addresses"],
    card: ["card number", "card numbers"],
    phone: ["phone number", "phone numbers"],
  };
  const parts = (Object.keys(nouns) as PiiKind[])
    .filter((kind) => counts[kind] > 0)
    .map((kind) => `${counts[kind]} ${nouns[kind][counts[kind] === 1 ? 0 : 1]}`);
  if (parts.length <= 1) return parts.join("");
  return `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}
