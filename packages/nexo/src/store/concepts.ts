/**
 * Concept tags: a few normalized keywords that stand for what a text is about, so that a memory and
 * a later question can meet even when they are worded differently ("prefers short answers" and
 * "what answer length does she prefer?" share `prefer` and `answer`).
 *
 * Deterministic and dependency-free, in four steps:
 *   1. lowercase, strip diacritics (NFKD, drop combining marks), drop `[REDACTED:…]` placeholders;
 *   2. split into letter/number runs, keep words of 3+ characters that are not all digits;
 *   3. drop English and Spanish stop words;
 *   4. stem with a few suffix rules (see `stem`), then rank by frequency, ties by first appearance.
 */

/** How many concept tags a stored memory gets when none are given. */
export const MAX_ENTRY_CONCEPTS = 8;
/** How many of a query's concept tags recall adds to the search (the plugin contract's "up to 3"). */
export const MAX_QUERY_CONCEPTS = 3;

const STOP_WORDS = new Set(
  // English
  (
    "about above after again against all also am an and any are aren as at be because been before being " +
    "below between both but by can cannot could did didn do does doesn doing don down during each few for " +
    "from further get gets got had has hasn have haven having he her here hers herself him himself his how " +
    "if in into is isn it its itself just let like me more most much must my myself no nor not now of off " +
    "on once only or other ought our ours ourselves out over own same she should so some such than that the " +
    "their theirs them themselves then there these they this those through to too under until up upon us " +
    "very was wasn we were weren what when where which while who whom why will with won would you your " +
    "yours yourself yourselves also really please thanks thank okay yes " +
    // Spanish
    "al algo algunas algunos ante antes como con contra cual cuales cuando de del desde donde durante el " +
    "ella ellas ellos en entre era eran eres es esa esas ese eso esos esta estaba estado estamos estan " +
    "estar estas este esto estos estoy fue fueron fui ha han has hasta hay la las le les lo los mas me mi " +
    "mis mucho muy nada ni no nos nosotros nuestra nuestro o otra otras otro otros para pero poco por porque " +
    "que quien quienes se sea ser si sido sin sobre somos son su sus tambien tan tanto te tengo tiene tienen " +
    "todo todos tu tus un una uno unos usted ustedes va vamos y ya yo"
  ).split(" "),
);

const PLACEHOLDER = /\[REDACTED:[a-z_]+\]/g;

/** Lowercase letter/number runs with diacritics removed. */
export function words(text: string): string[] {
  const folded = text
    .replace(PLACEHOLDER, " ")
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase();
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

const VOWEL = /[aeiouy]/;

/**
 * A light suffix stripper in the spirit of Porter's first steps. Two passes, each removing at most
 * one suffix (the first rule that fits), never leaving a stem shorter than the rule's minimum:
 *   1. inflection: -sses → -ss, -ies / -ied → -y, -s (not -ss/-us/-is) → ∅, and -ing / -ed → ∅
 *      when a vowel remains (then a doubled final consonant is undoubled: running → run);
 *   2. derivation: -ness, -ment, -ence, -ance → ∅ (stem of 4+), -ly → ∅ (stem of 5+).
 * It conflates the forms that matter for recall (answer/answers/answered/answering,
 * prefer/prefers/preference/preferences, concise/concisely, deploy/deployments) and is wrong in the
 * harmless direction elsewhere (two unrelated words may share a stem; a rare form may keep its own).
 */
export function stem(word: string): string {
  return firstRule(firstRule(word, INFLECTION), DERIVATION);
}

type Rule = (word: string) => string | undefined;

function firstRule(word: string, rules: readonly Rule[]): string {
  for (const rule of rules) {
    const result = rule(word);
    if (result !== undefined) return result;
  }
  return word;
}

/** A rule that replaces `suffix` when at least `min` characters remain before it. */
const suffix =
  (end: string, replacement = "", min = 3): Rule =>
  (word) => {
    if (!word.endsWith(end)) return undefined;
    const base = word.slice(0, word.length - end.length);
    return base.length >= min ? base + replacement : undefined;
  };

const undouble = (base: string): string =>
  /([b-df-hj-np-tv-z])\1$/.test(base) && !/(ll|ss|zz)$/.test(base) ? base.slice(0, -1) : base;

/** -ing / -ed only when the rest still has a vowel ("sing", "red" stay). */
const verbal =
  (end: string): Rule =>
  (word) => {
    const base = suffix(end)(word);
    return base !== undefined && VOWEL.test(base) ? undouble(base) : undefined;
  };

const INFLECTION: readonly Rule[] = [
  suffix("sses", "ss"),
  suffix("ies", "y"),
  suffix("ied", "y"),
  verbal("ing"),
  verbal("ed"),
  (word) => (/(ss|us|is)$/.test(word) ? undefined : suffix("s")(word)),
];

const DERIVATION: readonly Rule[] = [
  suffix("ness", "", 4),
  suffix("ment", "", 4),
  suffix("ence", "", 4),
  suffix("ance", "", 4),
  suffix("ly", "", 5),
];

/** The ranked concept tags of a text, at most `max`. */
export function conceptTags(text: string, max: number = MAX_ENTRY_CONCEPTS): string[] {
  const seen = new Map<string, { count: number; first: number }>();
  words(text).forEach((word, position) => {
    if (word.length < 3 || /^\p{N}+$/u.test(word) || isStopWord(word)) return;
    const tag = stem(word);
    const entry = seen.get(tag);
    if (entry) entry.count++;
    else seen.set(tag, { count: 1, first: position });
  });
  return [...seen.entries()]
    .sort(([, a], [, b]) => b.count - a.count || a.first - b.first)
    .slice(0, max)
    .map(([tag]) => tag);
}

/**
 * Concept tags given by a caller go through the same folding and stemming as derived ones, so that
 * "Preferences" given by hand meets `prefer` derived from a query; a multi-word tag is joined by "_".
 */
export function normalizeConceptTag(tag: string): string | undefined {
  const parts = words(tag).map(stem);
  return parts.length === 0 ? undefined : parts.join("_");
}
