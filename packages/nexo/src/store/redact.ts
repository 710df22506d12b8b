/**
 * Redaction of personal data and credentials: the one redactor of the daemon. `redact` runs before
 * anything is persisted; `scrubSecrets` cleans diagnostic text (provider errors) before it reaches
 * logs, transcripts or a door's `error` event.
 *
 * The rules run in a fixed order — remembered secret, e-mail, bearer token, API key, card, phone —
 * and each replaces what it finds with `[REDACTED:<label>]`. A placeholder holds no digit and no
 * "@", so later rules never fire inside an earlier rule's placeholder. Apart from the remembered
 * secrets (the values the process captured from its environment and the configured API keys, see
 * secrets/known.ts) the rules depend on nothing but the text, and text without a digit, an "@" or
 * a run of 16 or more non-blank characters is returned unchanged. docs/storage.md lists what is
 * and is not caught.
 */
import { knownSecretsPattern } from "../secrets/index.js";
import { findPhoneNumbers } from "./redact-phone.js";

export type RedactionLabel = "secret" | "email" | "bearer" | "api_key" | "card" | "phone";

export const REDACTION_LABELS: readonly RedactionLabel[] = [
  "secret",
  "email",
  "bearer",
  "api_key",
  "card",
  "phone",
];

export type RedactionCounts = Record<RedactionLabel, number>;

export interface RedactionResult {
  text: string;
  /** How many spans each rule replaced. */
  counts: RedactionCounts;
}

export const placeholder = (label: RedactionLabel): string => `[REDACTED:${label}]`;

export const emptyCounts = (): RedactionCounts => ({
  secret: 0,
  email: 0,
  bearer: 0,
  api_key: 0,
  card: 0,
  phone: 0,
});

export function addCounts(into: RedactionCounts, from: RedactionCounts): void {
  for (const label of REDACTION_LABELS) into[label] += from[label];
}

// --- remembered secrets ------------------------------------------------------------------------

/** Every value the process knows to be a secret, whatever it looks like. */
function redactKnownSecrets(text: string, counts: RedactionCounts): string {
  const pattern = knownSecretsPattern();
  if (pattern === undefined) return text;
  return text.replace(pattern, () => {
    counts.secret++;
    return placeholder("secret");
  });
}

// --- e-mail -------------------------------------------------------------------------------------

/** RFC 5322 atext: what an unquoted local part may contain. */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const DOMAIN_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const EMAIL = new RegExp(
  `${ATEXT}+(?:\\.${ATEXT}+)*@(?:${DOMAIN_LABEL}\\.)+[A-Za-z]{2,63}(?![A-Za-z0-9-])`,
  "g",
);
/**
 * Quotes, "=", "/", "|" and braces are legal in a local part but far more often glue an address to
 * the text before it (`to='ana@x.org'`, `?email=ana@x.org`); the address is taken to start after
 * the last of them, as long as what follows still starts like an address.
 */
const LOCAL_PART_GLUE = /^(.*['`=/|{}])([A-Za-z0-9][^@]*@.*)$/s;

function redactEmails(text: string, counts: RedactionCounts): string {
  return text.replace(EMAIL, (match) => {
    counts.email++;
    const glued = LOCAL_PART_GLUE.exec(match);
    return glued ? `${glued[1]}${placeholder("email")}` : placeholder("email");
  });
}

// --- bearer tokens ---------------------------------------------------------------------------------

/**
 * "Bearer" followed by an RFC 6750 token. The token must look like a credential (16+ characters, or
 * 8+ with a digit) so that prose such as "the bearer of bad news" is left alone.
 */
const BEARER = /\bbearer\s+([A-Za-z0-9._~+/-]+=*)/gi;
/** A JSON Web Token on its own (header.payload.signature, base64url, header and payload JSON). */
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

function looksLikeCredential(token: string): boolean {
  return token.length >= 16 || (token.length >= 8 && /\d/.test(token));
}

function redactBearer(text: string, counts: RedactionCounts): string {
  const withoutJwt = !MAY_MATCH.jwt(text)
    ? text
    : text.replace(JWT, () => {
        counts.bearer++;
        return placeholder("bearer");
      });
  if (!MAY_MATCH.bearer(withoutJwt)) return withoutJwt;
  return withoutJwt.replace(BEARER, (match, token: string) => {
    if (!looksLikeCredential(token)) return match;
    counts.bearer++;
    return `${match.slice(0, match.length - token.length)}${placeholder("bearer")}`;
  });
}

// --- API keys ------------------------------------------------------------------------------------

/** Not preceded by a character that would make the match the tail of a longer word. */
const START = "(?<![A-Za-z0-9_-])";
const END = "(?![A-Za-z0-9_-])";

const PROVIDER_KEYS: readonly RegExp[] = [
  // Anthropic (sk-ant-api03-…, sk-ant-oat01-…) and OpenAI (sk-…, sk-proj-…, sk-svcacct-…).
  new RegExp(`${START}sk-[A-Za-z0-9_-]{20,}`, "g"),
  // AWS access key ids.
  new RegExp(`${START}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}${END}`, "g"),
  // GitHub tokens (classic and fine-grained).
  new RegExp(`${START}gh[pousr]_[A-Za-z0-9]{36,}${END}`, "g"),
  new RegExp(`${START}github_pat_[A-Za-z0-9_]{22,}`, "g"),
  // Slack tokens; real ones always carry digits (workspace and user ids).
  new RegExp(`${START}xox[abposre]-(?=[A-Za-z0-9-]*\\d)[A-Za-z0-9-]{10,}`, "g"),
  new RegExp(`${START}xapp-\\d-[A-Za-z0-9-]{10,}`, "g"),
  // Google API keys.
  new RegExp(`${START}AIza[0-9A-Za-z_-]{35}${END}`, "g"),
  // Stripe secret, restricted and publishable keys.
  new RegExp(`${START}(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`, "g"),
];

/**
 * `api_key=…`, `"access_token": "…"`, `client-secret: …`: a name that says secret, then `=` or `:`,
 * then a value of 16+ key characters mixing letters and digits (hex and base64 secrets always do;
 * ordinary words and file paths do not). The name is kept so the text still reads.
 */
const ASSIGNED_SECRET =
  /\b([A-Za-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|pwd|credentials?|auth)["']?\s*[:=]\s*["']?)([A-Za-z0-9+/_.~-]{16,}={0,2})/gi;

/**
 * Whether `text` holds `length` key characters ([A-Za-z0-9_-]) in a row. A loop, not
 * /[A-Za-z0-9_-]{15}/: the regular expression retries from every position (~5 µs on a 360-character
 * reply against ~0.3 µs for one pass).
 */
function hasKeyRun(text: string, length: number): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const key = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45;
    run = key ? run + 1 : 0;
    if (run >= length) return true;
  }
  return false;
}

/** ASSIGNED_SECRET's name ending and assignment alone. */
const SECRET_NAME_THEN_ASSIGNMENT = /(?:key|token|secret|passw(?:or)?d|pwd|credentials?|auth)["']?\s*[:=]/i;

function redactApiKeys(text: string, counts: RedactionCounts): string {
  let out = text;
  if (MAY_MATCH.providerKey(out)) {
    for (const pattern of PROVIDER_KEYS) {
      out = out.replace(pattern, () => {
        counts.api_key++;
        return placeholder("api_key");
      });
    }
  }
  if (!MAY_MATCH.assignedSecret(out)) return out;
  return out.replace(ASSIGNED_SECRET, (match, name: string, value: string) => {
    if (!/\d/.test(value) || !/[A-Za-z]/.test(value)) return match;
    counts.api_key++;
    return `${name}${placeholder("api_key")}`;
  });
}

// --- card numbers --------------------------------------------------------------------------------

/**
 * 13–19 digits, optionally grouped by single spaces or dashes, standing alone (not glued to letters,
 * digits, a sign or a decimal point). Only Luhn-valid numbers whose first digit is one card networks
 * issue (2–6) are redacted: millisecond timestamps and snowflake ids, which start with 1, survive.
 * Digits right after an international prefix ("+1 555 …") are a phone number, not a card.
 */
const CARD_CANDIDATE =
  /(?<![A-Za-z0-9_+.,-])(?<!\+\d{1,4}[ .-]?)\d(?:[ -]?\d){12,18}(?![A-Za-z0-9_]|[.,]\d)/g;

export function luhnValid(digits: string): boolean {
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

function redactCards(text: string, counts: RedactionCounts): string {
  return text.replace(CARD_CANDIDATE, (match) => {
    const digits = match.replace(/[ -]/g, "");
    const first = digits.charCodeAt(0) - 48;
    if (first < 2 || first > 6 || !luhnValid(digits)) return match;
    counts.card++;
    return placeholder("card");
  });
}

// --- phone numbers -------------------------------------------------------------------------------

function redactPhones(text: string, counts: RedactionCounts): string {
  const spans = findPhoneNumbers(text);
  if (spans.length === 0) return text;
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + placeholder("phone");
    at = span.end;
    counts.phone++;
  }
  return out + text.slice(at);
}

// --- entry points --------------------------------------------------------------------------------

/**
 * What each rule's patterns cannot match without, checked before the patterns run: most chat text
 * has no "@", no "bearer", no long run of key characters, and the patterns cost a scan each (the
 * e-mail pattern was half the time of a 360-character reply). Each is a necessary condition read
 * straight off the pattern (an address holds "@"; every provider key shape is 15+ key characters
 * in a row; an assigned secret is a secret's name then ":" or "=" — the pattern's tail without its
 * costly leading name characters; a JWT starts "eyJ"); test/store/redact.test.ts
 * checks each against its pattern. Placeholders add no digit, "@" or long run, so a condition
 * false for the text stays false for what earlier rules leave of it.
 */
export const MAY_MATCH = {
  email: (text: string): boolean => text.includes("@"),
  jwt: (text: string): boolean => text.includes("eyJ"),
  bearer: (text: string): boolean => /bearer/i.test(text),
  providerKey: (text: string): boolean => hasKeyRun(text, 15),
  assignedSecret: (text: string): boolean => SECRET_NAME_THEN_ASSIGNMENT.test(text),
  digits: (text: string): boolean => /\d/.test(text),
} as const;

/** The patterns behind MAY_MATCH's conditions, for the test that holds the two together. */
export const GUARDED_PATTERNS = {
  email: [EMAIL],
  jwt: [JWT],
  bearer: [BEARER],
  providerKey: PROVIDER_KEYS,
  assignedSecret: [ASSIGNED_SECRET],
  digits: [CARD_CANDIDATE],
} as const;

export function redact(text: string): RedactionResult {
  const counts = emptyCounts();
  let out = redactKnownSecrets(text, counts);
  if (MAY_MATCH.email(out)) out = redactEmails(out, counts);
  out = redactBearer(out, counts);
  out = redactApiKeys(out, counts);
  if (MAY_MATCH.digits(out)) {
    out = redactCards(out, counts);
    out = redactPhones(out, counts);
  }
  return { text: out, counts };
}

// --- random-looking tokens (diagnostic text only) ---------------------------------------------------

/**
 * A token of key characters holding a run of 24 or more letters and digits that mixes both (at
 * least two of each): the body of most API keys and access tokens, which identifiers, words and
 * paths (short runs between separators) do not have. UUIDs and vendors' request ids (`req_…`) are
 * ids an operator quotes to support, not secrets, and are kept.
 * Used only by `scrubSecrets`: in transcripts such runs are often hashes the conversation needs.
 */
const TOKEN = /[A-Za-z0-9_+/=-]*[A-Za-z0-9]{24,}[A-Za-z0-9_+/=-]*/g;
const ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|req(?:uest)?[_-].*)$/i;

function redactRandomTokens(text: string, counts: RedactionCounts): string {
  return text.replace(TOKEN, (token) => {
    if (ID.test(token)) return token;
    const runs = token.match(/[A-Za-z0-9]{24,}/g) ?? [];
    const random = runs.some(
      (run) => (run.match(/\d/g)?.length ?? 0) >= 2 && (run.match(/[A-Za-z]/g)?.length ?? 0) >= 2,
    );
    if (!random) return token;
    counts.api_key++;
    return placeholder("api_key");
  });
}

/**
 * Credentials out of diagnostic text — a provider's error message, which may echo the key it was
 * sent: remembered secrets, bearer tokens and JWTs, API keys by shape and by name, and any long
 * random-looking token. E-mail addresses, card and phone numbers are left alone: an operator
 * reading an error needs its words, and none of them is a credential.
 */
export function scrubSecrets(text: string): string {
  const counts = emptyCounts();
  let out = redactKnownSecrets(text, counts);
  out = redactBearer(out, counts);
  out = redactApiKeys(out, counts);
  return redactRandomTokens(out, counts);
}

/** A JSON object key that names a secret: its string value is redacted whole, whatever it looks like. */
const SECRET_KEY =
  /(?:^|[_.-])(?:api[_-]?key|apikey|token|secret|passw(?:or)?d|pwd|authorization|credentials?)$/i;

export interface RedactedValue<T> {
  value: T;
  counts: RedactionCounts;
}

/**
 * Redacts every string inside a JSON value (objects, arrays, nested to any depth). Object keys are
 * kept: they are names a schema chose, and rewriting two keys into one placeholder would lose data.
 * A string under a secret-sounding key (`api_key`, `password`, `Authorization`, …) is replaced
 * whole when it is 8 characters or longer, because there the name, not the shape, says it is one.
 */
export function redactJson<T>(value: T): RedactedValue<T> {
  const counts = emptyCounts();
  const walk = (node: unknown, key: string | undefined): unknown => {
    if (typeof node === "string") {
      if (key !== undefined && SECRET_KEY.test(key) && node.length >= 8 && !node.startsWith("[REDACTED:")) {
        const label: RedactionLabel = /^bearer\s/i.test(node) ? "bearer" : "api_key";
        counts[label]++;
        return placeholder(label);
      }
      const result = redact(node);
      addCounts(counts, result.counts);
      return result.text;
    }
    if (Array.isArray(node)) return node.map((item) => walk(item, undefined));
    if (node !== null && typeof node === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = walk(v, k);
      return out;
    }
    return node;
  };
  return { value: walk(value, undefined) as T, counts };
}
