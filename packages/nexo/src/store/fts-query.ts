/**
 * Turning what a person typed into an FTS5 MATCH expression without ever handing FTS5 their syntax.
 * Every term becomes a double-quoted string (quotes inside doubled), which FTS5 reads as a phrase of
 * whatever tokens it contains, so `OR`, `NEAR(`, `col:`, `^`, `-` and `*` inside a term are just
 * text. Two things the user can still express, because they only ever narrow or reshape a term:
 *
 *   - `"several words"` — a phrase (an unclosed quote runs to the end of the input);
 *   - a trailing `*` — a prefix (`deploy*` finds "deployment").
 */

export interface SearchTerm {
  /** The term's text, as typed (FTS5 tokenizes it). */
  text: string;
  /** Whether the last token is a prefix. */
  prefix: boolean;
  /** Whether the user quoted it (so it is a phrase on purpose, even if it is one word). */
  quoted: boolean;
}

/** Long pasted text would become an expensive query; beyond this many terms the rest is ignored. */
export const MAX_TERMS = 32;

/** Something FTS5's unicode61 tokenizer keeps: a letter or a number. */
const SEARCHABLE = /[\p{L}\p{N}]/u;

/**
 * Control characters separate terms: FTS5 reads its expression as a C string, so a NUL inside a
 * quoted term would end the expression early ("unterminated string") instead of being text.
 */
const CONTROL = /\p{Cc}/gu;

export function parseQuery(raw: string): SearchTerm[] {
  const input = raw.replace(CONTROL, " ");
  const terms: SearchTerm[] = [];
  let i = 0;
  while (i < input.length && terms.length < MAX_TERMS) {
    const ch = input[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    let text: string;
    let quoted = false;
    if (ch === '"') {
      const close = input.indexOf('"', i + 1);
      const end = close === -1 ? input.length : close;
      text = input.slice(i + 1, end);
      quoted = true;
      i = close === -1 ? input.length : close + 1;
    } else {
      let end = i;
      while (end < input.length && !/\s/.test(input[end]!) && input[end] !== '"') end++;
      text = input.slice(i, end);
      i = end;
    }
    let prefix = false;
    if (quoted && input[i] === "*") {
      prefix = true;
      while (input[i] === "*") i++;
    } else if (!quoted && text.endsWith("*")) {
      prefix = true;
      text = text.replace(/\*+$/, "");
    }
    if (SEARCHABLE.test(text)) terms.push({ text, prefix, quoted });
  }
  return terms;
}

/** The term as an FTS5 string literal: `"text"` or `"text"*`. */
export function quoteTerm(term: SearchTerm): string {
  return `"${term.text.replaceAll('"', '""')}"${term.prefix ? "*" : ""}`;
}

/** Every term must match (what a search box means). */
export function allOf(terms: readonly SearchTerm[]): string {
  return terms.map(quoteTerm).join(" AND ");
}

/** Any term may match; bm25 ranks entries that match more of them first (what recall means). */
export function anyOf(terms: readonly SearchTerm[]): string {
  return terms.map(quoteTerm).join(" OR ");
}

/**
 * The index token standing for one id in a `scope` column (see schema.ts): a one-letter kind
 * ("s" session, "a" agent, "t" tenant) and the id's UTF-8 bytes in hex, which is what SQLite's
 * hex() yields for the same text. Hex keeps any id — spaces, dots, emoji — to a single token.
 */
export function scopeToken(kind: "s" | "a" | "t", id: string): string {
  return `${kind}${Buffer.from(id, "utf8").toString("hex")}`;
}
